import Foundation
import TestSupport
@testable import WebImage
import XCTest

/// The shared-tier envelope read in place: from a slice of a larger buffer (indices not from 0), truncated at
/// every length, and under another key.
final class SharedTierEnvelopeTests: XCTestCase {
    func testAnEnvelopeIsReadFromAnySliceAndRefusedWhenTruncatedOrForAnotherKey() throws {
        var generator = SplitMix64(seed: 0x16e)
        let body = Data((0..<3_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let key = "https://example.com/画像 1.png"
        let envelope = try SharedTierEnvelope.encode(body, key: key, metadata: ImageCacheMetadata(scale: 2))

        let padded = Data([1, 2, 3, 4, 5]) + envelope + Data([9, 9])
        let slice = padded[5..<(5 + envelope.count)] // startIndex 5
        for candidate in [envelope, slice] {
            let decoded = try XCTUnwrap(SharedTierEnvelope.decode(candidate, key: key))
            XCTAssertEqual(decoded.data, body)
            XCTAssertEqual(decoded.data.startIndex, 0, "the image bytes are indexed from 0")
            XCTAssertEqual(decoded.metadata.scale, 2)
        }
        XCTAssertNil(SharedTierEnvelope.decode(slice, key: key + "x"), "an entry of another key is a miss")
        // Every truncation before the image bytes is refused; one inside them is a shorter image (the tier
        // stores whole values, and the decoder refuses a truncated image).
        let headerLength = envelope.count - body.count
        for length in 0..<headerLength {
            XCTAssertNil(SharedTierEnvelope.decode(slice.prefix(length), key: key), "truncated to \(length) bytes")
        }
    }
}
