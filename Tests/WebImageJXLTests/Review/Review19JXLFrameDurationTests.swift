import ImageCodec
import TestSupport
@testable import WebImageJXL
import XCTest

/// Found while auditing commit 7bc9d31's NaN fix: a frame duration of NaN or ∞ reached `JXLEncoder`'s integer
/// conversion and trapped; `ImageFrame` now keeps durations finite and not negative.
final class Review19JXLFrameDurationTests: XCTestCase {
    func testHostileDurationsEncode() throws {
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        var red = try PixelBuffer(width: 16, height: 16), blue = try PixelBuffer(width: 16, height: 16)
        for y in 0..<16 {
            for x in 0..<16 {
                red.setPixel(x: x, y: y, to: RGBA(r: 255, g: 0, b: 0, a: 255))
                blue.setPixel(x: x, y: y, to: RGBA(r: 0, g: 0, b: 255, a: 255))
            }
        }
        for duration in [Double.nan, .infinity, -.infinity, -1, 1e300] {
            let frames = [ImageFrame(buffer: red, duration: duration), ImageFrame(buffer: blue, duration: 0.5)]
            let data = try JXLEncoder().encode(frames, format: .jpegXL, loopCount: 0, options: EncodeOptions())
            let image = try ImageDecoder.decode(data)
            XCTAssertEqual(image.frameCount, 2, "\(duration)")
            for index in 0..<image.frameCount {
                let d = try image.frame(at: index).duration
                XCTAssertTrue(d.isFinite && d >= 0, "\(duration): frame \(index) lasts \(d)")
            }
        }
    }
}
