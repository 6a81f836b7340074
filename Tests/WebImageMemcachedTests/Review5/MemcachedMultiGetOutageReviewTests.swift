import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Review (attack): #16 promises that with one of three servers gone "about a third of lookups become
/// misses, nothing else moves". `wi_mc_mget` returns at once when `memcached_mget` reports anything but
/// success — `MEMCACHED_SOME_ERRORS` when one server could not be sent its keys — without fetching the
/// answers the live servers are sending: a multi-get during an outage could then give nothing at all.
final class MemcachedMultiGetOutageReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    func testAMultiGetWithOneOfThreeServersDeadStillFindsTheKeysOfTheLiveOnes() throws {
        servers = try startMemcached(3)
        var options = relaxedOptions()
        options.connections = 1 // one handle: its connections to all three servers are warm
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let keys = (0..<60).map { "outage-\($0)" }
        for key in keys { XCTAssertTrue(tier.waitSet(payload(for: key, size: 500), forKey: key)) }
        XCTAssertEqual(tier.waitValues(forKeys: keys).count, keys.count)
        let victim = servers[1]
        let onLiveServers = keys.filter { tier.server(forKey: $0).map { Int($0.port) } != victim.port }
        XCTAssertGreaterThan(onLiveServers.count, 20)

        victim.kill()
        for attempt in 0..<3 {
            let found = tier.waitValues(forKeys: keys)
            let missing = onLiveServers.filter { found[$0] != payload(for: $0, size: 500) }
            XCTAssertEqual(missing.count, 0,
                           "multi-get \(attempt) after the kill: \(found.count) of \(keys.count) found; \(missing.count) of the \(onLiveServers.count) keys on live servers missed (statistics \(tier.statistics))")
        }
    }
}
