@_spi(QualityModel) @testable import ImageCodec
import TestSupport
import XCTest

/// What each `EncodeEffort` asks of libwebp, and that `.smallest` keeps away from method 6's lossless-alpha
/// settings for pictures with alpha (they took 5.8 s for one 400 px chart, 80× method 5).
final class WebPEncoderEffortTests: XCTestCase {
    func testMethodAndSharpYUVPerEffortAndAlpha() throws {
        for hasAlpha in [false, true] {
            let fast = try WebPEncoder.makeConfig(EncodeOptions(effort: .fast), hasAlpha: hasAlpha)
            let balanced = try WebPEncoder.makeConfig(EncodeOptions(effort: .balanced), hasAlpha: hasAlpha)
            let smallest = try WebPEncoder.makeConfig(EncodeOptions(effort: .smallest), hasAlpha: hasAlpha)
            XCTAssertEqual([fast.method, balanced.method], [2, 4])
            XCTAssertEqual(smallest.method, hasAlpha ? WebPEncoder.smallestMethodWithAlpha : 6)
            XCTAssertEqual([fast.use_sharp_yuv, balanced.use_sharp_yuv, smallest.use_sharp_yuv], [0, 0, 1])
            var sharp = EncodeOptions()
            sharp.usesSharpYUV = true
            let automatic = try WebPEncoder.makeConfig(sharp, hasAlpha: hasAlpha)
            XCTAssertEqual([automatic.method, automatic.use_sharp_yuv], [4, 1])
            // Lossless keeps libwebp's defaults whatever the effort.
            let lossless = try WebPEncoder.makeConfig(EncodeOptions(isLossless: true, effort: .smallest), hasAlpha: hasAlpha)
            XCTAssertEqual([lossless.lossless, lossless.exact, lossless.use_sharp_yuv], [1, 1, 0])
        }
        XCTAssertLessThan(WebPEncoder.smallestMethodWithAlpha, 6)
    }

    /// A transparent picture at `.smallest` still keeps its alpha exactly (alpha is lossless at every method).
    func testSmallestKeepsAlphaExactly() throws {
        let input = try GIFWebPTestImages.photoLike(width: 97, height: 61, alpha: true)
        XCTAssertFalse(input.isOpaque)
        let data = try WebPEncoder.encode(input, options: EncodeOptions(quality: 0.8, effort: .smallest))
        let output = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        let straight = input.converted(to: .rgba8)
        for y in 0..<input.height {
            for x in 0..<input.width {
                XCTAssertEqual(output.pixel(x: x, y: y).a, straight.pixel(x: x, y: y).a, "(\(x), \(y))")
            }
        }
    }
}
