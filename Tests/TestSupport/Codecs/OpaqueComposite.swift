import ImageCodec

/// Flattening for metrics that take opaque pixels.
public enum OpaqueComposite {
    /// `buffer` composited on mid grey (127.5): opaque RGBA, so two metrics compared on it see the same pixels.
    public static func onMidGrey(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let premultiplied = buffer.converted(to: .rgba8Premultiplied)
        var out = try PixelBuffer(width: buffer.width, height: buffer.height)
        for y in 0..<buffer.height {
            for x in 0..<buffer.width {
                let p = premultiplied.pixel(x: x, y: y)
                func c(_ v: UInt8) -> UInt8 { UInt8((Double(v) + 127.5 * Double(255 - p.a) / 255).rounded()) }
                out.setPixel(x: x, y: y, to: RGBA(r: c(p.r), g: c(p.g), b: c(p.b), a: 255))
            }
        }
        return out
    }
}
