import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// Review: an AVIF file cut short must be reported as `ImageCodecError.truncated(.avif)` ("the data ends
/// before the image does"), as `AVIFDecoder.decode` documents. libavif 0.11 reports a box cut short as a
/// BMFF parse failure ("Exceeded avifIO's sizeHint, possibly truncated data"), which was passed on as
/// corrupt data.
final class AVIFTruncationReviewTests: XCTestCase {
    /// Every 7th prefix of a sequence (ftyp 40 bytes, meta 397, moov 1,407, mdat 423) after its `ftyp` box.
    func testEveryPrefixAfterTheFileTypeBoxIsReportedTruncated() throws {
        let url: URL
        do { url = try ModernCorpus.url(format: "avif", endingWith: "libavif__colors-animated-12bpc-keyframes-0-2-3.avif") } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        let data = try Data(contentsOf: url)
        XCTAssertNoThrow(try AVIFDecoder().decode(data, options: DecodeOptions(preloadAllFrames: true)))
        var wrong: [String] = []
        for count in stride(from: 48, to: data.count, by: 7) {
            do {
                _ = try AVIFDecoder().decode(Data(data.prefix(count)), options: DecodeOptions(preloadAllFrames: true))
                wrong.append("\(count): decoded")
            } catch let error as ImageCodecError {
                if error != .truncated(format: .avif) { wrong.append("\(count): \(error)") }
            }
        }
        XCTAssertEqual(wrong, [], "\(data.count) bytes: \(wrong.count) prefixes not reported truncated, e.g. \(wrong.prefix(3))")
    }
}
