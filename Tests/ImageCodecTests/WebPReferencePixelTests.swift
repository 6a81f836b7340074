import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Compares our still WebP pixels with libwebp's own `dwebp -pam` (the same library: exact, lossy included).
final class WebPReferencePixelTests: XCTestCase {
    func testStillImagesMatchDwebpExactly() throws {
        guard ReferenceDecoder.path(of: "dwebp") != nil else { throw XCTSkip("dwebp is not installed") }
        let entries = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && $0.frameCount == 1 }
        var compared = 0
        for entry in entries {
            guard let reference = try ReferenceDecoder.dwebp(entry.url) else { continue }
            let image = try ImageDecoder.decode(Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8))
            XCTAssertEqual(reference.width, image.width, entry.path)
            XCTAssertEqual(reference.height, image.height, entry.path)
            guard reference.width == image.width, reference.height == image.height else { continue }
            XCTAssertEqual(GIFWebPCorpus.maxDifference(image.firstFrame.buffer, reference), 0, entry.path)
            compared += 1
        }
        XCTAssertGreaterThan(compared, 30)
    }

    func testPremultipliedDecodeMatchesStraightDecode() throws {
        let entries = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && $0.hasAlpha == true }
        for entry in entries.prefix(6) {
            let data = try Data(contentsOf: entry.url)
            let display = try ImageDecoder.decode(data).firstFrame.buffer
            let straight = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
            XCTAssertEqual(display.pixelFormat, .rgba8Premultiplied)
            // libwebp premultiplies with its own fixed-point rounding: allow 1.
            XCTAssertLessThanOrEqual(ReferenceDecoder.maxDifference(display.packedBytes,
                                                                    straight.converted(to: .rgba8Premultiplied).packedBytes), 1, entry.path)
        }
    }
}
