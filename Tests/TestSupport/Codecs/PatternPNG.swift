import Foundation
import ImageCodec

/// A 40×30 PNG whose pattern depends on `seed`: small distinct images for cache and fleet tests.
public func patternPNG(seed: UInt8) throws -> Data {
    var buffer = try PixelBuffer(width: 40, height: 30, pixelFormat: .rgba8)
    for y in 0..<30 {
        for x in 0..<40 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 6), g: UInt8(y * 8), b: seed &* 90)) }
    }
    var encoder = ImageEncoder(format: .png)
    encoder.addFrame(buffer)
    return try encoder.encode()
}
