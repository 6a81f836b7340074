import ImageCodec

/// Shrinks straight RGBA8 pixels by whole `factor` × `factor` boxes (column `x`, row `y` go to `x / factor`,
/// `y / factor`; the last boxes may be partial), colour weighted by alpha: the reference for thumbnails that
/// shrink-on-load before their Lanczos resize (`ColorConversion.deepThumbnail`), "resized the same way".
public enum BoxShrink {
    /// The shrunk copy of `buffer` (converted to straight RGBA8 first).
    public static func shrink(_ buffer: PixelBuffer, factor: Int) throws -> PixelBuffer {
        let source = buffer.converted(to: .rgba8)
        guard factor > 1 else { return source }
        let (width, height) = (source.width, source.height)
        let (gw, gh) = ((width + factor - 1) / factor, (height + factor - 1) / factor)
        var out = try PixelBuffer(width: gw, height: gh, pixelFormat: .rgba8)
        for gy in 0..<gh {
            for gx in 0..<gw {
                var sums = [Int](repeating: 0, count: 4), count = 0
                for y in gy * factor..<min(height, (gy + 1) * factor) {
                    for x in gx * factor..<min(width, (gx + 1) * factor) {
                        let p = source.pixel(x: x, y: y)
                        let a = Int(p.a)
                        sums[0] += Int(p.r) * a
                        sums[1] += Int(p.g) * a
                        sums[2] += Int(p.b) * a
                        sums[3] += a
                        count += 1
                    }
                }
                guard sums[3] > 0 else { continue }
                let alpha = sums[3]
                out.setPixel(x: gx, y: gy, to: RGBA(r: UInt8((sums[0] + alpha / 2) / alpha), g: UInt8((sums[1] + alpha / 2) / alpha),
                                                    b: UInt8((sums[2] + alpha / 2) / alpha), a: UInt8((alpha + count / 2) / count)))
            }
        }
        return out
    }
}
