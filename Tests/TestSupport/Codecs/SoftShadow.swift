import ImageCodec

/// A transparent test picture whose alpha errors a metric on grey underrates: a dark blue disc with an
/// antialiased edge over a soft black drop shadow (alpha up to 0.55), on transparency. Automatic quality's attack
/// tests write it and score the output on black and on white.
public enum SoftShadow {
    /// The picture at `width` × `height` (straight RGBA). The shadow's offset and softness scale with the height
    /// (14 and 40 px at 240 px high).
    public static func image(width: Int, height: Int) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        let scale = Double(height) / 240
        let (cx, cy, radius) = (Double(width) * 0.45, Double(height) * 0.45, Double(min(width, height)) * 0.3)
        for y in 0..<height {
            for x in 0..<width {
                let (px, py) = (Double(x) + 0.5, Double(y) + 0.5)
                let disc = min(1, max(0, radius - ((px - cx) * (px - cx) + (py - cy) * (py - cy)).squareRoot() + 0.5))
                let (sx, sy) = (px - cx - 14 * scale, py - cy - 14 * scale)
                let shadow = 0.55 * min(1, max(0, 1 - ((sx * sx + sy * sy).squareRoot() - radius) / (40 * scale)))
                // Disc over shadow, straight colour: the disc (30, 40, 120), the shadow black.
                let alpha = disc + shadow * (1 - disc)
                let i = (y * width + x) * 4
                if alpha > 0 {
                    bytes[i] = UInt8((30 * disc / alpha).rounded())
                    bytes[i + 1] = UInt8((40 * disc / alpha).rounded())
                    bytes[i + 2] = UInt8((120 * disc / alpha).rounded())
                }
                bytes[i + 3] = UInt8((alpha * 255).rounded())
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }
}
