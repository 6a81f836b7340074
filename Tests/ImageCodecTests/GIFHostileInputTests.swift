import Foundation
import ImageCodec
import TestSupport
import XCTest

final class GIFHostileInputTests: XCTestCase {
    /// Every GIF in the corpus, truncated at 10 offsets and with random byte flips, decodes or throws an
    /// `ImageCodecError`: never a crash, never another error type.
    func testTruncatedAndFlippedFilesDecodeOrThrow() throws {
        let entries = try GIFWebPCorpus.entries(format: "gif")
        var decoded = 0, rejected = 0
        for (n, entry) in entries.enumerated() {
            let data = try Data(contentsOf: entry.url)
            for variant in GIFWebPCorpus.hostileVariants(of: data, flips: 6, seed: UInt64(n + 1)) {
                if GIFWebPCorpus.decodeAllFrames(variant, options: DecodeOptions(preloadAllFrames: true)) != nil {
                    decoded += 1
                } else {
                    rejected += 1
                }
                _ = GIFWebPCorpus.decodeAllFrames(variant)
                do {
                    _ = try ImageDecoder.info(variant)
                } catch {
                    XCTAssertTrue(error is ImageCodecError, "info threw \(type(of: error)): \(error)")
                }
            }
        }
        XCTAssertGreaterThan(rejected, 0)
        XCTAssertGreaterThan(decoded, 0)
    }
}
