import ImageCodec
import XCTest

/// Pattern builders and checks shared by the processing tests.
enum Patterns {
    /// A buffer whose pixel (x, y) is `f(x, y)`.
    static func make(width: Int, height: Int, format: PixelBuffer.PixelFormat = .rgba8Premultiplied,
                     _ f: (Int, Int) -> RGBA) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: format)
        for y in 0..<height { for x in 0..<width { buffer.setPixel(x: x, y: y, to: f(x, y)) } }
        return buffer
    }

    static func solid(width: Int, height: Int, _ c: RGBA) throws -> PixelBuffer {
        try make(width: width, height: height) { _, _ in c }
    }

    /// 1-pixel black/white opaque checkerboard.
    static func checkerboard(width: Int, height: Int) throws -> PixelBuffer {
        try make(width: width, height: height) { x, y in
            let v: UInt8 = (x + y) % 2 == 0 ? 0 : 255
            return RGBA(r: v, g: v, b: v)
        }
    }

    /// Every pixel distinct: r = x, g = y, b = 10 * x + y, opaque.
    static func indexed(width: Int, height: Int) throws -> PixelBuffer {
        try make(width: width, height: height) { x, y in
            RGBA(r: UInt8(x), g: UInt8(y), b: UInt8(truncatingIfNeeded: 10 * x + y))
        }
    }

    /// Mean of channel `c` (0 = r … 3 = a) over all pixels.
    static func mean(_ b: PixelBuffer, channel c: Int) -> Double {
        let bytes = b.packedBytes
        var sum = 0
        var i = c
        while i < bytes.count { sum += Int(bytes[i]); i += 4 }
        return Double(sum) / Double(b.width * b.height)
    }

    /// Every premultiplied pixel has colour ≤ alpha.
    static func assertValidPremultiplied(_ b: PixelBuffer, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = b.packedBytes
        for i in stride(from: 0, to: bytes.count, by: 4) {
            let a = bytes[i + 3]
            if bytes[i] > a || bytes[i + 1] > a || bytes[i + 2] > a {
                XCTFail("pixel \(i / 4) has colour above alpha: \(bytes[i ..< i + 4])", file: file, line: line)
                return
            }
        }
    }
}
