import Foundation

extension PixelBuffer {
    /// This image sharpened by an unsharp mask: each channel moved away from its Gaussian blur (standard deviation
    /// `radius` pixels) by `amount` times the difference, clamped; with `luminanceOnly`, only the luma (ITU-R 601)
    /// is sharpened and the difference added to every channel alike, so colours do not fringe. Thumbor's
    /// `sharpen(amount, radius, luminance_only)` takes the same arguments (its own kernel is a wavelet one; the
    /// results are close, not identical).
    ///
    /// - Throws: `ImageProcessingError.invalidRadius` for a negative, NaN or infinite radius;
    ///   `ImageCodecError.allocationFailed`.
    /// - Important: Holds a blurred copy and its working plane besides the result; pure, thread-safe.
    public func sharpened(amount: Double, radius: Double) throws -> PixelBuffer {
        try sharpened(amount: amount, radius: radius, luminanceOnly: false)
    }

    /// As `sharpened(amount:radius:)`, on the luma alone when `luminanceOnly`.
    public func sharpened(amount: Double, radius: Double, luminanceOnly: Bool) throws -> PixelBuffer {
        guard radius.isFinite, radius >= 0 else { throw ImageProcessingError.invalidRadius(radius) }
        guard amount.isFinite, amount != 0, radius > 0 else { return self }
        var out = converted(to: .rgba8)
        let blurred = try out.blurred(radius: radius)
        let stride = out.bytesPerRow
        let blurStride = blurred.bytesPerRow
        let (w, h) = (width, height)
        out.withUnsafeMutableBytes { d in
            blurred.withUnsafeBytes { s in
                for y in 0..<h {
                    for x in 0..<w {
                        let o = y * stride + x * 4
                        let i = y * blurStride + x * 4
                        if luminanceOnly {
                            let luma = 0.299 * Double(d[o]) + 0.587 * Double(d[o + 1]) + 0.114 * Double(d[o + 2])
                            let soft = 0.299 * Double(s[i]) + 0.587 * Double(s[i + 1]) + 0.114 * Double(s[i + 2])
                            let delta = amount * (luma - soft)
                            for c in 0..<3 { d[o + c] = UInt8(clamping: Int((Double(d[o + c]) + delta).rounded())) }
                        } else {
                            for c in 0..<3 {
                                let value = Double(d[o + c]) + amount * (Double(d[o + c]) - Double(s[i + c]))
                                d[o + c] = UInt8(clamping: Int(value.rounded()))
                            }
                        }
                    }
                }
            }
        }
        return out.converted(to: pixelFormat)
    }
}
