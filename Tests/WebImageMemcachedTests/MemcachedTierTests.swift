import Foundation
import KVCache
import TestSupport
@testable import WebImageMemcached
import XCTest

/// `MemcachedTier` against real memcached servers on loopback ports: the operations, expiry, the item size
/// limit, the key mapping, the configuration errors.
final class MemcachedTierTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    func testSetGetMultiGetAndRemove() throws {
        servers = try startMemcached(2)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        let keys = (0..<40).map { "https://example.com/image-\($0).jpg" }
        for key in keys { XCTAssertTrue(tier.waitSet(payload(for: key, size: 3_000), forKey: key)) }

        XCTAssertEqual(tier.waitValue(forKey: keys[3]), payload(for: keys[3], size: 3_000))
        XCTAssertNil(tier.waitValue(forKey: "https://example.com/never-stored.jpg"))
        let found = tier.waitValues(forKeys: keys + ["https://example.com/absent.png"])
        XCTAssertEqual(Set(found.foundKeys), Set(keys), "multi-get returns every stored key and no other")
        for key in keys { XCTAssertEqual(found[key], payload(for: key, size: 3_000), key) }
        // Both servers hold a share (consistent hashing spreads 40 keys).
        let shares = Dictionary(grouping: keys) { tier.server(forKey: $0)?.port ?? 0 }
        XCTAssertEqual(Set(shares.keys), Set(servers.map { UInt16($0.port) }))

        XCTAssertTrue(tier.waitRemove(forKey: keys[3]))
        XCTAssertNil(tier.waitValue(forKey: keys[3]))
        XCTAssertTrue(tier.waitRemove(forKey: keys[3]), "removing an absent key is answered")
        XCTAssertEqual(tier.waitValue(forKey: keys[4]), payload(for: keys[4], size: 3_000), "other keys stay")

        let stats = tier.statistics
        XCTAssertEqual(stats.stores, 40)
        XCTAssertEqual(stats.removals, 2)
        XCTAssertEqual(stats.errors, 0)
        XCTAssertEqual(stats.lookups, 1 + 1 + 41 + 1 + 1)
        XCTAssertEqual(stats.hits, 1 + 40 + 1)
    }

    func testTimeToLiveExpires() throws {
        servers = try startMemcached(1)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        XCTAssertTrue(tier.waitSet(Data("short".utf8), forKey: "ttl", timeToLive: 1))
        XCTAssertTrue(tier.waitSet(Data("long".utf8), forKey: "no-ttl"))
        XCTAssertEqual(tier.waitValue(forKey: "ttl"), Data("short".utf8), "present before it expires")
        // memcached expires on whole seconds: poll with a deadline (an external process, no callback).
        let deadline = Date().addingTimeInterval(4)
        var expired = false
        while Date() < deadline, !expired {
            expired = tier.waitValue(forKey: "ttl") == nil
            if !expired { usleep(100_000) }
        }
        XCTAssertTrue(expired, "a 1 s time to live expires within 4 s")
        XCTAssertEqual(tier.waitValue(forKey: "no-ttl"), Data("long".utf8), "the default time to live is long")
        XCTAssertEqual(MemcachedTier.expiration(seconds: 90 * 24 * 3600) > 1_700_000_000, true,
                       "over 30 days is sent as an absolute Unix time, as memcached reads it")
    }

    func testValuesOverTheItemSizeLimitAreSkippedAndCounted() throws {
        servers = try startMemcached(1, itemSizeLimit: "1m")
        var options = relaxedOptions()
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        XCTAssertTrue(tier.waitSet(payload(for: "fits", size: 900_000), forKey: "fits"))
        XCTAssertFalse(tier.waitSet(payload(for: "big", size: 1_100_000), forKey: "big"))
        XCTAssertEqual(tier.statistics.skippedTooLarge, 1)
        XCTAssertEqual(tier.statistics.errors, 0)
        XCTAssertNil(tier.waitValue(forKey: "big"))
        XCTAssertEqual(tier.waitValue(forKey: "fits")?.count, 900_000)

        // A tier told the servers take 4 MB while they take 1 MB: the server refuses, the tier counts it as
        // too large (not an outage: the breaker stays closed and the server keeps serving).
        options.itemSizeLimit = 4 << 20
        let optimistic = try MemcachedTier(servers: servers.map(\.address), options: options)
        XCTAssertFalse(optimistic.waitSet(payload(for: "big", size: 2_000_000), forKey: "big"))
        XCTAssertEqual(optimistic.statistics.skippedTooLarge, 1)
        XCTAssertEqual(optimistic.statistics.errors, 0)
        XCTAssertFalse(optimistic.serverStates[0].isBreakerOpen)
        XCTAssertEqual(optimistic.waitValue(forKey: "fits")?.count, 900_000)
    }

    /// Cache keys are any strings (`cacheKeyFilter` returns whatever it likes): every byte value, spaces,
    /// control characters, non-ASCII, empty, very long. Each maps to a valid memcached key and round-trips.
    func testKeysWithEveryByteTheCacheKeyFilterCanProduce() throws {
        servers = try startMemcached(2)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        var keys = (0...255).map { "k" + String(UnicodeScalar(UInt8($0))) + "\u{0}tail" }
        keys += ["", " ", "a b\r\nc", String(repeating: "x", count: 10_000), "ünïcödé 🖼️", "\u{7F}\u{FFFD}",
                 "https://example.com/a b?q=1#frag"]
        XCTAssertEqual(Set(keys).count, keys.count)
        for key in keys {
            let remote = RemoteCacheKey.standard.remoteKey(for: key)
            XCTAssertLessThanOrEqual(remote.utf8.count, 250)
            XCTAssertFalse(remote.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "no space or control byte")
            XCTAssertTrue(tier.waitSet(payload(for: key, size: 64), forKey: key), "key \(key.debugDescription.prefix(40))")
        }
        for key in keys { XCTAssertEqual(tier.waitValue(forKey: key), payload(for: key, size: 64)) }
        XCTAssertEqual(tier.waitValues(forKeys: keys).count, keys.count)
        XCTAssertEqual(tier.statistics.errors, 0)
    }

    /// Consistent (ketama) hashing: removing one of three servers moves only the keys that were on it (modula,
    /// libmemcached's default, would move about half of the others too). No server needs to run: the mapping is
    /// the client's.
    func testConsistentHashingMovesOnlyTheRemovedServersKeys() throws {
        let three = ["10.0.0.5:11211", "10.0.0.6:11211", "10.0.0.7:11211"]
        let pool = try MemcachedTier(servers: three)
        let shrunk = try MemcachedTier(servers: Array(three.prefix(2)))
        let keys = (0..<300).map { "https://example.com/\($0).jpg" }
        var onRemoved = 0, moved = 0
        for key in keys {
            let before = try XCTUnwrap(pool.server(forKey: key))
            if before.description == three[2] { onRemoved += 1; continue }
            if shrunk.server(forKey: key) != before { moved += 1 }
        }
        XCTAssertEqual(moved, 0, "keys on the remaining servers stay where they are")
        XCTAssertGreaterThan(onRemoved, 300 / 6, "the removed server held about a third")
        XCTAssertLessThan(onRemoved, 300 / 2)
    }

    func testKeySchemesAreVersionedNamespaces() {
        XCTAssertNil(RemoteCacheKey(namespace: ""))
        XCTAssertNil(RemoteCacheKey(namespace: "has space"))
        XCTAssertNil(RemoteCacheKey(namespace: String(repeating: "n", count: 65)))
        let v1 = RemoteCacheKey(namespace: "thumbs", version: 1)
        let v2 = RemoteCacheKey(namespace: "thumbs", version: 2)
        XCTAssertEqual(v1?.remoteKey(for: "a"), "thumbs:v1:0cc175b9c0f1b6a831c399e269772661")
        XCTAssertNotEqual(v1?.remoteKey(for: "a"), v2?.remoteKey(for: "a"), "a new version never reads old entries")
    }

    func testConfigurationErrorsAreTyped() throws {
        XCTAssertThrowsError(try MemcachedTier(servers: [String]())) { XCTAssertEqual($0 as? MemcachedTierError, .noServers) }
        XCTAssertThrowsError(try MemcachedTier(servers: ["host:notaport"])) {
            XCTAssertEqual($0 as? MemcachedTierError, .invalidServer("host:notaport"))
        }
        var options = MemcachedTier.Options()
        options.deadTimeoutSeconds = 0
        XCTAssertThrowsError(try MemcachedTier(servers: ["127.0.0.1:1"], options: options)) {
            guard case .invalidOption = $0 as? MemcachedTierError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(MemcachedServer("[::1]:11311"), MemcachedServer(host: "::1", port: 11311))
        XCTAssertEqual(MemcachedServer("cache-1"), MemcachedServer(host: "cache-1", port: 11211))
    }
}
