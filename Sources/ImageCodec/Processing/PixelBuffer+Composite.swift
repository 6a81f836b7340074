import Foundation

extension PixelBuffer {
    /// A `width` × `height` image of one straight colour, in `pixelFormat`.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`, `.invalidDimensions` for a non-positive size.
    public static func solid(width: Int, height: Int, color: RGBA, pixelFormat: PixelFormat = .rgba8) throws -> PixelBuffer {
        var out = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        let stride = out.bytesPerRow
        out.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                var o = y * stride
                for _ in 0..<width {
                    bytes[o] = color.r; bytes[o + 1] = color.g; bytes[o + 2] = color.b; bytes[o + 3] = color.a
                    o += 4
                }
            }
        }
        return out.converted(to: pixelFormat)
    }

    /// This image with `image` drawn on it with its top-left corner at (`x`, `y`) (parts outside are cut):
    /// composited over it by its alpha ("source over") when `blendsAlpha`, else its pixels copied as they are,
    /// transparent ones included (PIL's `paste` without a mask). `opacity` (0…1) scales `image`'s alpha first.
    ///
    /// - Important: O(pixels) for the copy, O(pixels of `image`) for the drawing; the result is in this buffer's
    ///   pixel format; pure, thread-safe.
    public func drawing(_ image: PixelBuffer, x: Int, y: Int, blendsAlpha: Bool = true, opacity: Double = 1) -> PixelBuffer {
        var out = self
        out.draw(image, x: x, y: y, blendsAlpha: blendsAlpha, opacity: opacity)
        return out.converted(to: pixelFormat)
    }

    /// Draws `image` on this buffer in place, as `drawing(_:x:y:blendsAlpha:opacity:)` describes; the buffer becomes
    /// straight `.rgba8` (converted once, so that many draws cost only their own pixels: a tiled watermark).
    ///
    /// - Important: O(pixels of `image`) once converted; not thread-safe (mutates).
    public mutating func draw(_ image: PixelBuffer, x: Int, y: Int, blendsAlpha: Bool = true, opacity: Double = 1) {
        convert(to: .rgba8)
        let source = image.converted(to: .rgba8)
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(width, x.addingReportingOverflow(image.width).overflow ? width : x + image.width)
        let y1 = min(height, y.addingReportingOverflow(image.height).overflow ? height : y + image.height)
        guard x0 < x1, y0 < y1 else { return }
        let scale = Int((min(max(opacity.isNaN ? 1 : opacity, 0), 1) * 255).rounded())
        let (outStride, sourceStride) = (bytesPerRow, source.bytesPerRow)
        withUnsafeMutableBytes { d in
            source.withUnsafeBytes { s in
                for row in y0..<y1 {
                    for column in x0..<x1 {
                        let o = row * outStride + column * 4
                        let i = (row - y) * sourceStride + (column - x) * 4
                        let sa = Int(s[i + 3]) * scale / 255
                        if !blendsAlpha {
                            d[o] = s[i]; d[o + 1] = s[i + 1]; d[o + 2] = s[i + 2]; d[o + 3] = UInt8(sa)
                            continue
                        }
                        if sa == 0 { continue }
                        let da = Int(d[o + 3])
                        // Source over, in straight alpha: out.a = sa + da (1 − sa); colour weighted by each share.
                        let outA255 = sa * 255 + da * (255 - sa) // × 255
                        guard outA255 > 0 else { continue }
                        for c in 0..<3 {
                            let value = (Int(s[i + c]) * sa * 255 + Int(d[o + c]) * da * (255 - sa) + outA255 / 2) / outA255
                            d[o + c] = UInt8(clamping: value)
                        }
                        d[o + 3] = UInt8(clamping: (outA255 + 127) / 255)
                    }
                }
            }
        }
    }

    /// This image composited over a solid `color` (thumbor's `background_color`): opaque wherever `color` is.
    ///
    /// - Throws: `ImageCodecError.allocationFailed`.
    /// - Important: O(pixels); pure, thread-safe.
    public func composited(over color: RGBA) throws -> PixelBuffer {
        try PixelBuffer.solid(width: width, height: height, color: color, pixelFormat: pixelFormat).drawing(self, x: 0, y: 0)
    }
}
