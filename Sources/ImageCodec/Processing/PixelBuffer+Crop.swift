import Foundation

extension PixelBuffer {
    /// The part of this image inside the rectangle at (`x`, `y`) of `width × height` pixels, clamped to the
    /// image: a rectangle reaching past an edge is cut at that edge.
    ///
    /// ```swift
    /// let face = try photo.cropped(x: 120, y: 80, width: 64, height: 64)
    /// ```
    ///
    /// - Throws: `ImageProcessingError.emptyCropRect` when the rectangle is empty (a non-positive side) or does
    ///   not overlap the image; `ImageCodecError.allocationFailed`. Huge values never overflow.
    /// - Important: O(cropped pixels); returns `self` for the whole image; pure, thread-safe.
    public func cropped(x: Int, y: Int, width: Int, height: Int) throws -> PixelBuffer {
        let empty = ImageProcessingError.emptyCropRect(x: x, y: y, width: width, height: height,
                                                       imageWidth: self.width, imageHeight: self.height)
        guard width > 0, height > 0 else { throw empty }
        // Saturating ends: x + width may overflow for hostile values.
        let (right, o1) = x.addingReportingOverflow(width)
        let (bottom, o2) = y.addingReportingOverflow(height)
        let x0 = max(x, 0), y0 = max(y, 0)
        let x1 = o1 ? self.width : min(right, self.width)
        let y1 = o2 ? self.height : min(bottom, self.height)
        guard x0 < x1, y0 < y1 else { throw empty }
        if x0 == 0, y0 == 0, x1 == self.width, y1 == self.height { return self }
        // Not zeroed: its rows have no padding and each is copied whole below.
        var out = try PixelBuffer(width: x1 - x0, height: y1 - y0, pixelFormat: pixelFormat, zeroed: false)
        let rowBytes = (x1 - x0) * 4
        let (sourceStride, outStride) = (bytesPerRow, out.bytesPerRow)
        withUnsafeBytes { source in
            out.withUnsafeMutableBytes { destination in
                guard let s = source.baseAddress, let d = destination.baseAddress else { return }
                for row in 0..<(y1 - y0) {
                    (d + row * outStride).copyMemory(from: s + (y0 + row) * sourceStride + x0 * 4, byteCount: rowBytes)
                }
            }
        }
        return out
    }
}
