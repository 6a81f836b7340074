import Foundation
import ImageCodec

/// Synthetic images for the downsampled and incremental decoding tests.
enum DownsampleFixtures {
    /// A photo-like opaque pattern: smooth gradients plus a mild high-frequency texture.
    static func photo(width: Int, height: Int, alpha: Bool = false) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        for y in 0..<height {
            for x in 0..<width {
                let r = UInt8((x * 255) / max(width - 1, 1))
                let g = UInt8((y * 255) / max(height - 1, 1))
                let b = UInt8(truncatingIfNeeded: 128 + Int(60 * sin(Double(x) / 7) * cos(Double(y) / 11)))
                let a: UInt8 = alpha ? UInt8(truncatingIfNeeded: 64 + (x + y) % 192) : 255
                buffer.setPixel(x: x, y: y, to: RGBA(r: r, g: g, b: b, a: a))
            }
        }
        return buffer
    }

    static func encode(_ buffer: PixelBuffer, as format: ImageFormat, progressive: Bool = false) throws -> Data {
        var encoder = ImageEncoder(format: format, options: EncodeOptions(quality: 0.9, isProgressive: progressive))
        encoder.addFrame(buffer)
        return try encoder.encode()
    }
}
