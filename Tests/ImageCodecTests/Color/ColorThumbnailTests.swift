import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Where the colour transform runs in a thumbnail: per pixel, so on the smallest buffer the decoder makes (after
/// the resize), not on the larger DCT-scaled image.
final class ColorThumbnailTests: XCTestCase {
    /// A 256 × 256 chart as a JPEG (our encoder) with `profile` embedded.
    private func taggedJPEG(_ profile: Data) throws -> Data {
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.95))
        encoder.addFrame(try ColorTestSupport.chart(size: 256))
        return ICCEmbedding.embed(profile, in: try encoder.encode(), format: .jpeg, width: 256, height: 256)
    }

    /// The sRGB thumbnail is exactly the untouched thumbnail (`.preserve`, same resize) through the transform:
    /// the transform ran last, on the thumbnail's pixels.
    private func assertTransformedLast(_ data: Data, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let preserved = try ColorTestSupport.decode(data, .preserve)
        let icc = try XCTUnwrap(preserved.colorSpace?.iccProfile, name, file: file, line: line)
        let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: icc), layout: .rgba, management: .sRGB)
        XCTAssertNotNil(plan.transform, "\(name) is converted", file: file, line: line)
        for size in [200, 100, 40] {
            let ours = try ColorTestSupport.decode(data, maxPixelSize: size).firstFrame.buffer
            var expected = try ColorTestSupport.decode(data, .preserve, maxPixelSize: size).firstFrame.buffer
            plan.apply(to: &expected)
            XCTAssertEqual(ours, expected, "\(name) @\(size): the transform runs on the thumbnail", file: file, line: line)
        }
    }

    func testTaggedJPEGThumbnailIsTransformedAfterTheResize() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB])
        for path in [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB] {
            try assertTransformedLast(try taggedJPEG(Data(contentsOf: URL(fileURLWithPath: path))), path)
        }
    }

    func testCorpusJPEGThumbnailsAreTransformedAfterTheResize() throws {
        for name in ["jpeg/vips_sample.jpg", "jpeg/libavif_apple_gainmap_old.jpg", "jpeg/sharp_Landscape_8.jpg"] {
            try assertTransformedLast(Data(contentsOf: ColorTestSupport.corpusFile(name)), name)
        }
    }
}
