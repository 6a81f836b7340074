@testable import ImageCodec
import TestSupport
import XCTest

/// Found while auditing commit 7bc9d31's NaN fix for other Doubles that reach `Int(_:)`: a frame's duration (a
/// caller's `addFrame(_:duration:)`, or any `ImageFrame`) went unchecked into the GIF and WebP encoders'
/// `Int(_:)` (and JPEG XL's and AVIF's), so NaN, an infinity or a huge duration trapped the encode.
final class Review19FrameDurationTests: XCTestCase {
    func testHostileDurationsEncodeEveryAnimatedFormat() throws {
        let red = try Patterns.make(width: 8, height: 8) { _, _ in RGBA(r: 255, g: 0, b: 0) }
        let blue = try Patterns.make(width: 8, height: 8) { _, _ in RGBA(r: 0, g: 0, b: 255) }
        for duration in [Double.nan, .infinity, -.infinity, -1, 1e300, -0.0] {
            for format in [ImageFormat.gif, .webp, .apng] {
                var encoder = ImageEncoder(format: format)
                encoder.addFrame(red, duration: duration)
                encoder.addFrame(blue, duration: 0.5)
                let image = try ImageDecoder.decode(try encoder.encode())
                XCTAssertEqual(image.frameCount, 2, "\(format) at \(duration)")
                for index in 0..<image.frameCount {
                    let d = try image.frame(at: index).duration
                    XCTAssertTrue(d.isFinite && d >= 0, "\(format) at \(duration): frame \(index) lasts \(d)")
                }
            }
        }
    }

    /// The rule itself: a duration is finite and not negative (NaN and negatives are 0, +∞ and anything longer
    /// are `ImageFrame.maximumDuration`), whether given to `init` or set.
    func testFrameDurationIsFiniteAndNotNegative() throws {
        let buffer = try PixelBuffer(width: 1, height: 1)
        XCTAssertEqual(ImageFrame(buffer: buffer, duration: .nan).duration, 0)
        XCTAssertEqual(ImageFrame(buffer: buffer, duration: -3).duration, 0)
        XCTAssertEqual(ImageFrame(buffer: buffer, duration: .infinity).duration, ImageFrame.maximumDuration)
        XCTAssertEqual(ImageFrame(buffer: buffer, duration: 0.04).duration, 0.04)
        var frame = ImageFrame(buffer: buffer, duration: 1)
        frame.duration = 1e300
        XCTAssertEqual(frame.duration, ImageFrame.maximumDuration)
        XCTAssertEqual(ImageFrame(buffer: buffer, duration: .nan), ImageFrame(buffer: buffer, duration: 0))
    }
}
