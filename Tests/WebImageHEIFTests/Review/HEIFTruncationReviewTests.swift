import Foundation
import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// Review: a HEIF file cut short must be reported as `ImageCodecError.truncated(.heif)` ("the data ends
/// before the image does"), as `HEIFDecoder.decode` documents. libheif 1.15 cannot read a `meta` box cut
/// short and says "Invalid input: No 'meta' box", which was passed on as corrupt data.
final class HEIFTruncationReviewTests: XCTestCase {
    /// Every 5th prefix of a valid file (ftyp 28 bytes, meta 3,717, mdat 85) after its `ftyp` box: most cut
    /// the `meta` box (an ICC profile), the last ones the `mdat`.
    func testEveryPrefixAfterTheFileTypeBoxIsReportedTruncated() throws {
        let url: URL
        do { url = try ModernCorpus.url(format: "heic", endingWith: "kingfisher__gradient-10b-srgb-alpha.heic") } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        let data = try Data(contentsOf: url)
        XCTAssertNoThrow(try HEIFDecoder().decode(data, options: DecodeOptions()))
        var wrong: [String] = []
        for count in stride(from: 36, to: data.count, by: 5) {
            for info in [false, true] {
                do {
                    let prefix = Data(data.prefix(count))
                    if info { _ = try HEIFDecoder().info(prefix) } else { _ = try HEIFDecoder().decode(prefix, options: DecodeOptions()) }
                    if !info { wrong.append("\(count): decoded") }  // info may answer once the meta box is whole
                } catch let error as ImageCodecError {
                    if error != .truncated(format: .heif) { wrong.append("\(count)\(info ? " info" : ""): \(error)") }
                }
            }
        }
        XCTAssertEqual(wrong, [], "\(data.count) bytes: \(wrong.count) prefixes not reported truncated, e.g. \(wrong.prefix(3))")
    }
}
