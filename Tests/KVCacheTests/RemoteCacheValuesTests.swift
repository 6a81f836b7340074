import Foundation
import KVCache
import XCTest

/// `RemoteCacheValues`, a multi-get's result: aligned with the keys asked for, keys compared by their bytes.
final class RemoteCacheValuesTests: XCTestCase {
    func testKeysEqualOnlyAfterNormalisationKeepTheirOwnValues() {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let result = RemoteCacheValues(requestedKeys: [composed, "absent", decomposed, composed],
                                       values: [Data([1]), nil, Data([2]), Data([1])])
        XCTAssertEqual(result[composed], Data([1]))
        XCTAssertEqual(result[decomposed], Data([2]))
        XCTAssertNil(result["absent"])
        XCTAssertNil(result["never asked"])
        XCTAssertEqual(result.count, 2, "two distinct keys found (the repeated one counts once)")
        XCTAssertEqual(result.foundKeys.map { Array($0.utf8) }, [Array(composed.utf8), Array(decomposed.utf8)])
        XCTAssertEqual(result.map(\.value), [Data([1]), Data([2])])
        XCTAssertEqual(result.values, [Data([1]), nil, Data([2]), Data([1])], "aligned with the request")
    }

    func testMissesAndMismatchedCounts() {
        let misses = RemoteCacheValues.misses(["a", "b"])
        XCTAssertEqual(misses.requestedKeys, ["a", "b"])
        XCTAssertEqual(misses.values, [nil, nil])
        XCTAssertEqual(misses.count, 0)
        let short = RemoteCacheValues(requestedKeys: ["a", "b"], values: [Data([9])])
        XCTAssertEqual(short.requestedKeys, ["a"], "extra keys without a value are dropped")
        XCTAssertEqual(short["a"], Data([9]))
    }
}
