import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Review (defect): the README promises that keys are bytes — `"é"` (U+00E9) and `"e\u{301}"` are distinct
/// entries — and the shared tier keeps them apart for single gets (each key's own MD5). `values(forKeys:)`
/// does not: it collects what `memcached_mget` found in a `[String: Data]` keyed by the caller's keys, and
/// Swift's `String ==` is canonical equivalence, so the second key's value overwrites the first's under the
/// first key. Looked up by either key, the result gives the same bytes: one of the two keys reads the other
/// key's value (a wrong image for that URL), where the contract allows only its own value or a miss.
/// (`statistics.lookups` counts `Set(keys).count`: one lookup for the two keys.)
final class MemcachedMultiGetExactKeysReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    func testMultiGetNeverGivesOneKeyTheValueOfAKeyEqualOnlyAfterNormalisation() throws {
        servers = try startMemcached(1)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        let composed = "https://images.example/caf\u{E9}.jpg"
        let decomposed = "https://images.example/cafe\u{301}.jpg"
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8), "two keys as bytes")
        let composedValue = payload(for: "composed", size: 2_000)
        let decomposedValue = payload(for: "decomposed", size: 3_000)
        XCTAssertTrue(tier.waitSet(composedValue, forKey: composed))
        XCTAssertTrue(tier.waitSet(decomposedValue, forKey: decomposed))
        // Single gets keep them apart (the remote key hashes the bytes).
        XCTAssertEqual(tier.waitValue(forKey: composed), composedValue)
        XCTAssertEqual(tier.waitValue(forKey: decomposed), decomposedValue)

        let found = tier.waitValues(forKeys: [composed, decomposed])
        let forComposed = found[composed], forDecomposed = found[decomposed]
        XCTAssertTrue(forComposed == nil || forComposed == composedValue,
                      "key \"caf\\u{E9}\" got \(forComposed?.count ?? 0) bytes: the value of \"cafe\\u{301}\"")
        XCTAssertTrue(forDecomposed == nil || forDecomposed == decomposedValue,
                      "key \"cafe\\u{301}\" got \(forDecomposed?.count ?? 0) bytes: the value of \"caf\\u{E9}\"")
        XCTAssertEqual(tier.statistics.lookups, 4, "2 single gets + a multi-get of 2 distinct keys")
    }
}
