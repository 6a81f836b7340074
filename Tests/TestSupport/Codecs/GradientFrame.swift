import ImageCodec

/// Synthetic frames for encoder round trips.
public enum GradientFrame {
    /// A straight RGBA frame of `width` × `height`: gradients (shifted by `seed`, so frames of an animation differ),
    /// and alpha falling from 255 (left) to 0 (right) when `alpha`.
    public static func make(width: Int, height: Int, seed: Int = 0, alpha: Bool = false) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        for y in 0..<height { for x in 0..<width {
            let a = alpha ? UInt8(255 - 255 * x / max(width - 1, 1)) : 255
            buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8((x * 255 / max(width, 1) + seed * 40) % 256), g: UInt8(y * 255 / max(height, 1)),
                                                 b: UInt8((seed * 70) % 256), a: a))
        } }
        return buffer
    }
}
