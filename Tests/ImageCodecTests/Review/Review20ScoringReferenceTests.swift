@testable import ImageCodec
import XCTest

/// Review of automatic quality's scoring (`ScoringReference`: grey, black and white) on images the metric cannot
/// measure.
final class Review20ScoringReferenceTests: XCTestCase {
    /// `buffer` with every colour inverted (alpha kept): a candidate nothing could mistake for the original.
    static func inverted(_ buffer: PixelBuffer) throws -> PixelBuffer {
        var out = buffer.converted(to: .rgba8)
        let (stride, width, height) = (out.bytesPerRow, out.width, out.height)
        out.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    for c in 0..<3 { bytes[y * stride + x * 4 + c] = 255 - bytes[y * stride + x * 4 + c] }
                }
            }
        }
        return out
    }

    /// Under 8 pixels on a side the metric has no scale and scores even an image's colour negative 100, on grey,
    /// black and white: the search passed every try and served the last, measured by nothing (a 7×7 icon at WebP
    /// q67, a 300×7 strip at JPEG q61 for `.high`). Such an image is written as the fallback, without tries: WebP
    /// lossless (every pixel back), JPEG quality 100; opaque or transparent, 1×1, 7×7, 300×7, 7×40. 8×8, the
    /// smallest size with a scale, is still searched.
    func testImagesTheMetricCannotMeasureAreWrittenAsTheFallback() throws {
        for (width, height) in [(1, 1), (7, 7), (300, 7), (7, 40), (8, 8)] {
            for alpha in [false, true] {
                let source = try GIFWebPTestImages.photoLike(width: width, height: height, seed: 5, alpha: alpha)
                let measurable = width >= 8 && height >= 8
                if !measurable {
                    // Why: the metric cannot tell the image from its negative at this size.
                    XCTAssertEqual(try ScoringReference(source).score(try Self.inverted(source)), 100)
                }
                for format in [ImageFormat.webp, .jpeg] {
                    let name = "\(width)×\(height) alpha \(alpha) \(format)"
                    let report = try AutomaticQuality.encode(source, format: format, target: .high, options: EncodeOptions()) {
                        try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: format, loopCount: 0, options: $1)
                    }
                    if measurable {
                        XCTAssertFalse(report.tries.isEmpty, name)
                        continue
                    }
                    XCTAssertTrue(report.usedFallback, "\(name): served q\(report.quality) after \(report.tries)")
                    XCTAssertTrue(report.tries.isEmpty, name)
                    XCTAssertEqual(report.quality, 100, name)
                    let decoded = try ImageDecoder.decode(report.data).firstFrame.buffer
                    XCTAssertEqual((decoded.width, decoded.height) == (width, height), true, name)
                    if format == .webp {
                        // Lossless up to the rounding of premultiplied colour to straight and back.
                        let error = zip(Self.premultipliedBytes(decoded), Self.premultipliedBytes(source)).map { abs(Int($0) - Int($1)) }.max()
                        XCTAssertLessThanOrEqual(error ?? 255, 1, "\(name): not lossless")
                    }
                }
            }
        }
    }

    /// The pixels as premultiplied RGBA, row by row, without padding.
    static func premultipliedBytes(_ buffer: PixelBuffer) -> [UInt8] {
        let straight = buffer.converted(to: .rgba8Premultiplied)
        return straight.withUnsafeBytes { raw in
            (0..<straight.height).flatMap { y in Array(raw[(y * straight.bytesPerRow)..<(y * straight.bytesPerRow + straight.width * 4)]) }
        }
    }
}
