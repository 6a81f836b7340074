import Foundation
import WebImage

/// The images the soak server serves: PNG, JPEG, GIF (animated) and WebP at several sizes, made with
/// WebImage's own encoders.
enum SoakImages {
    static func make() throws -> [Data] {
        var images: [Data] = []
        let formats: [ImageFormat] = [.png, .jpeg, .gif, .webp]
        for (index, side) in [48, 96, 160, 256, 384, 512].enumerated() {
            for (formatIndex, format) in formats.enumerated() {
                var encoder = ImageEncoder(format: format)
                let frames = format == .gif && index % 2 == 0 ? 3 : 1
                for frame in 0..<frames {
                    encoder.addFrame(try gradient(width: side, height: side * 3 / 4, seed: index * 7 + formatIndex + frame),
                                     duration: 0.1)
                }
                images.append(try encoder.encode())
            }
        }
        return images
    }

    private static func gradient(width: Int, height: Int, seed: Int) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(truncatingIfNeeded: x * 255 / width + seed * 31)
                bytes[i + 1] = UInt8(truncatingIfNeeded: y * 255 / height)
                bytes[i + 2] = UInt8(truncatingIfNeeded: (x ^ y) + seed)
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }
}
