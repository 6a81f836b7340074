import Foundation
import ImageCodec
import TestSupport
import XCTest

final class GIFHostileInputTests: XCTestCase {
    /// Every GIF in the corpus, truncated at 10 offsets and with random byte flips, decodes or throws an
    /// `ImageCodecError`: never a crash, never another error type.
    func testTruncatedAndFlippedFilesDecodeOrThrow() throws {
        try GIFWebPCorpus.assertHostileVariantsDecodeOrThrow(format: "gif")
    }
}
