import ImageCodec
import TestSupport
import XCTest

/// `EncodeOptions.quality` holds only 0…1: NaN (which slipped through `min`/`max` into `Int(_:)` in the JPEG and
/// AVIF encoders and trapped) becomes the default, infinities and values outside are clamped; every built-in
/// lossy encoder then writes an image from any of them.
final class EncodeOptionsQualityTests: XCTestCase {
    func testQualityIsClampedAndNaNIsTheDefault() {
        XCTAssertEqual(EncodeOptions(quality: .nan).quality, EncodeOptions.defaultQuality)
        XCTAssertEqual(EncodeOptions(quality: -.infinity).quality, 0)
        XCTAssertEqual(EncodeOptions(quality: .infinity).quality, 1)
        XCTAssertEqual(EncodeOptions(quality: -0.5).quality, 0)
        XCTAssertEqual(EncodeOptions(quality: 1.0000001).quality, 1)
        XCTAssertEqual(EncodeOptions(quality: 0.37).quality, 0.37)
        var options = EncodeOptions()
        XCTAssertEqual(options.quality, 0.9)
        options.quality = .signalingNaN
        XCTAssertEqual(options.quality, EncodeOptions.defaultQuality)
        options.quality = 2
        XCTAssertEqual(options, EncodeOptions(quality: 1), "equal options compare equal after clamping")
    }

    func testEveryLossyEncoderWritesFromAnyQuality() throws {
        var buffer = try PixelBuffer(width: 16, height: 16)
        for y in 0..<16 {
            for x in 0..<16 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 16), g: UInt8(y * 16), b: 128, a: 255)) }
        }
        for quality in [Double.nan, -.infinity, .infinity, -1, 0, 1, 7] {
            for format in [ImageFormat.jpeg, .webp] {
                var encoder = ImageEncoder(format: format, options: EncodeOptions(quality: quality))
                encoder.addFrame(buffer)
                let decoded = try ImageDecoder.decode(try encoder.encode())
                XCTAssertEqual(decoded.firstFrame.buffer.width, 16, "\(format) at \(quality)")
            }
        }
    }
}
