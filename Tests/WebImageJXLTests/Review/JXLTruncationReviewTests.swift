import Foundation
import ImageCodec
import TestSupport
import WebImageJXL
import XCTest

/// Review: a JPEG XL file cut short must be reported as `ImageCodecError.truncated(.jpegXL)` ("the data
/// ends before the image does"), as `JXLDecoder.decode` documents and as the AVIF, HEIF, WebP and GIF
/// decoders report theirs, not as corrupt data.
final class JXLTruncationReviewTests: XCTestCase {
    /// Every 11th proper prefix of two small valid files and every 29th of an animated one (four frames), and
    /// the last 16 of each, where a cut ends the last frame (every prefix took 44 s in a debug build).
    func testEveryPrefixOfAValidFileIsReportedTruncated() throws {
        let names = ["conformance__alpha_triangles.jxl", "conformance__sunset_logo.jxl", "testdata__cropped_traffic_light.jxl"]
        for name in names {
            let url: URL
            do { url = try ModernCorpus.url(format: "jxl", endingWith: name) } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
            let data = try Data(contentsOf: url)
            XCTAssertNoThrow(try JXLDecoder().decode(data, options: DecodeOptions()), "\(name) whole")
            var wrong: [String] = []
            let spread = Array(stride(from: 1, to: data.count, by: name.contains("traffic") ? 29 : 11))
            for count in Set(spread + Array(max(1, data.count - 16)..<data.count)).sorted() {
                do {
                    _ = try JXLDecoder().decode(Data(data.prefix(count)), options: DecodeOptions())
                    wrong.append("\(count): decoded")
                } catch let error as ImageCodecError {
                    if error != .truncated(format: .jpegXL) { wrong.append("\(count): \(error)") }
                }
            }
            XCTAssertEqual(wrong, [], "\(name) (\(data.count) bytes): \(wrong.count) prefixes not reported truncated, e.g. \(wrong.prefix(3))")
        }
    }
}
