@testable import ImageCodec
import XCTest

/// Review 18: `JPEGDecoder.thumbnailScaleDenominator` against the DCT-scaled image a shrink-on-load decode really
/// gives (`resizesToFit` false), over small and odd sizes and every `maxPixelSize` up to past the long side.
final class Review18JPEGDenominatorTests: XCTestCase {
    func testTheDenominatorGivesTheDecodedSize() throws {
        let sizes = [(1, 1), (1, 2), (2, 1), (3, 3), (1, 40), (40, 1), (9, 17), (17, 9), (64, 48), (65, 33), (127, 3)]
        var seen = Set<Int>()
        for (w, h) in sizes {
            var buffer = try PixelBuffer(width: w, height: h, pixelFormat: .rgba8)
            for y in 0..<h { for x in 0..<w { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x & 255), g: UInt8(y & 255), b: 90)) } }
            let jpeg = try JPEGEncoder.encode(buffer, options: EncodeOptions(quality: 0.9))
            for maxPixelSize in 1...(max(w, h) + 1) {
                let d = JPEGDecoder.thumbnailScaleDenominator(width: w, height: h, maxPixelSize: maxPixelSize)
                XCTAssertTrue([1, 2, 4, 8].contains(d))
                seen.insert(d)
                let decoded = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: maxPixelSize, resizesToFit: false))
                let expected = ((w + d - 1) / d, (h + d - 1) / d)
                XCTAssertEqual(decoded.width, expected.0, "\(w)×\(h) at \(maxPixelSize): d \(d)")
                XCTAssertEqual(decoded.height, expected.1, "\(w)×\(h) at \(maxPixelSize): d \(d)")
                let intermediate = JPEGDecoder.thumbnailIntermediateSize(width: w, height: h, maxPixelSize: maxPixelSize)
                XCTAssertEqual(intermediate.width, expected.0); XCTAssertEqual(intermediate.height, expected.1)
            }
        }
        XCTAssertEqual(seen, [1, 2, 4, 8], "every denominator exercised")
    }
}
