import Foundation

extension PixelBuffer {
    /// This image blurred by an approximate Gaussian whose standard deviation is `radius` pixels.
    ///
    /// `radius` is σ, as in CSS `filter: blur(radius)` and YYImage's `imageByBlurRadius:`; visible spread
    /// reaches about 3σ. Three box-blur passes per axis with widths chosen to match the Gaussian's variance
    /// (the W3C filter-effects method), each a sliding-window sum: cost is O(pixels) whatever the radius, so a
    /// progressive blur whose radius shrinks as data arrives (YYWebImage's `.progressiveBlur`) costs the same at
    /// every step. Edges are mirrored, so a solid image stays solid and the image's mean is kept within
    /// rounding; colour is filtered premultiplied, so transparent pixels never halo into visible ones.
    ///
    /// ```swift
    /// let soft = try partial.blurred(radius: 16)
    /// ```
    ///
    /// - Parameter radius: σ in pixels, ≥ 0. Below about 0.6 the boxes are one pixel wide and `self` is
    ///   returned unchanged. Radii above 4 × the longer side are treated as that (the result is flat there).
    /// - Returns: a buffer in this buffer's pixel format (straight alpha is premultiplied for filtering and
    ///   converted back).
    /// - Throws: `ImageProcessingError.invalidRadius` for a negative, NaN or infinite radius;
    ///   `ImageCodecError.allocationFailed`.
    /// - Important: Uses one 16-bit working plane (8 bytes per pixel) besides the result; pure, thread-safe.
    public func blurred(radius: Double) throws -> PixelBuffer {
        guard radius.isFinite, radius >= 0 else { throw ImageProcessingError.invalidRadius(radius) }
        let plan = BoxBlurPlan(sigma: min(radius, 4 * Double(max(width, height))))
        if plan.isIdentity { return self }
        if pixelFormat == .rgba8 {
            return try converted(to: .rgba8Premultiplied).blurred(radius: radius).converted(to: .rgba8)
        }
        let count = width * height * 4
        let bytes = count * MemoryLayout<UInt16>.stride
        guard let plane = malloc(bytes)?.assumingMemoryBound(to: UInt16.self) else {
            throw ImageCodecError.allocationFailed(byteCount: bytes)
        }
        defer { free(plane) }
        var out = try PixelBuffer(width: width, height: height, pixelFormat: pixelFormat)
        withUnsafeBytes { source in
            guard let s = source.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            BoxBlur.horizontal(source: s, sourceStride: bytesPerRow, into: plane, width: width, height: height, plan: plan)
        }
        let outStride = out.bytesPerRow
        out.withUnsafeMutableBytes { destination in
            guard let d = destination.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            BoxBlur.vertical(plane, into: d, outputStride: outStride, width: width, height: height, plan: plan)
        }
        return out
    }
}
