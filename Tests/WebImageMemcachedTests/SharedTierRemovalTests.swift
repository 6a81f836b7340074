import Dispatch
import Foundation
import KVCache
import Synchronization
import TestSupport
@testable import WebImage
import WebImageMemcached
import XCTest

/// A real `MemcachedTier` whose writes wait at a gate before they go to memcached: a write "in flight" for as
/// long as a test needs. Reads and removals go straight through.
private final class GatedTier: RemoteCacheTier {
    let base: MemcachedTier
    private let gate = DispatchGroup()

    init(_ base: MemcachedTier) {
        self.base = base
        gate.enter()
    }

    /// Lets the held writes (and every later one) through.
    func open() { gate.leave() }

    func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) { base.value(forKey: key, completion: completion) }
    func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
        base.values(forKeys: keys, completion: completion)
    }
    func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
        let base = self.base
        gate.notify(queue: .global()) { base.setValue(value, forKey: key, timeToLive: timeToLive, completion: completion) }
    }
    func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) { base.removeValue(forKey: key, completion: completion) }
    var statistics: RemoteCacheStatistics { base.statistics }
}

/// `ImageCache.removeFromSharedTier`: after the writes in flight, never blocking its caller.
final class SharedTierRemovalTests: MemcachedPoolTestCase {
    private func gatedCache(_ name: String) throws -> (ImageCache, GatedTier) {
        let tier = GatedTier(try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions()))
        return (try ImageCache(path: folder.appendingPathComponent(name).path, sharedTier: tier), tier)
    }

    /// A removal asked for while the key's own write is in flight takes effect after that write, so the
    /// write cannot bring the value back; the call returns at once.
    func testARemovalLandsAfterTheKeysWriteInFlight() async throws {
        let (cache, tier) = try gatedCache("order")
        cache.storeInSharedTier(Data("<html>error page</html>".utf8), forKey: "k", metadata: ImageCacheMetadata())
        let start = Date()
        cache.removeFromSharedTier(forKey: "k", timeout: 30)
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5, "the removal blocked its caller")
        usleep(200_000)
        tier.open()
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 20), "the write or the removal never finished")
        let left = await tier.base.value(forKey: "k")
        XCTAssertNil(left, "the write in flight landed after the removal")
    }

    /// A removal waits for the writes of its own key only: a write of another key held in flight (or of a key
    /// equal to it as a `String` but not as bytes) does not hold it back, however long its timeout.
    func testARemovalDoesNotWaitForOtherKeysWrites() async throws {
        let (cache, tier) = try gatedCache("other-keys")
        for key in ["gone", "e\u{301}"] {
            let stored = await tier.base.setValue(Data("old".utf8), forKey: key)
            XCTAssertTrue(stored)
        }
        cache.storeInSharedTier(Data("other".utf8), forKey: "busy", metadata: ImageCacheMetadata())
        cache.storeInSharedTier(Data("other".utf8), forKey: "\u{e9}", metadata: ImageCacheMetadata())
        cache.removeFromSharedTier(forKey: "gone", timeout: 60)
        cache.removeFromSharedTier(forKey: "e\u{301}", timeout: 60)
        for key in ["gone", "e\u{301}"] {
            var left = await tier.base.value(forKey: key)
            let deadline = Date(timeIntervalSinceNow: 10)
            while left != nil, Date() < deadline {
                try await Task.sleep(nanoseconds: 20_000_000)
                left = await tier.base.value(forKey: key)
            }
            XCTAssertNil(left, "the removal of \(key.unicodeScalars.map { String($0.value, radix: 16) }) waited for another key's write")
        }
        XCTAssertFalse(cache.waitForPendingSharedWrites(timeout: 0.2), "the held writes counted as answered")
        tier.open()
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 20))
    }

    /// A write of the key itself that hangs holds its removal back only until the timeout.
    func testARemovalRunsAtItsTimeoutWhenItsKeysWriteHangs() async throws {
        let (cache, tier) = try gatedCache("timeout")
        let stored = await tier.base.setValue(Data("old".utf8), forKey: "k")
        XCTAssertTrue(stored)
        cache.storeInSharedTier(Data("new".utf8), forKey: "k", metadata: ImageCacheMetadata())
        let start = Date()
        cache.removeFromSharedTier(forKey: "k", timeout: 0.3)
        var left = await tier.base.value(forKey: "k")
        while left != nil, Date().timeIntervalSince(start) < 10 {
            try await Task.sleep(nanoseconds: 20_000_000)
            left = await tier.base.value(forKey: "k")
        }
        XCTAssertNil(left, "the removal waited past its timeout for a write that hangs")
        XCTAssertGreaterThan(Date().timeIntervalSince(start), 0.25, "the removal did not wait for the key's write at all")
        tier.open()
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 20))
    }

    /// Many removals at once, each exactly once: every key is gone and the pending count drains to zero
    /// (a removal left or started twice would leave the wait hanging or trap on an unbalanced group).
    func testManyConcurrentRemovalsEachRunOnce() async throws {
        let (cache, tier) = try gatedCache("many")
        for index in 0..<64 {
            let stored = await tier.base.setValue(Data([UInt8(index)]), forKey: "key-\(index)")
            XCTAssertTrue(stored)
        }
        cache.storeInSharedTier(Data("in flight".utf8), forKey: "busy", metadata: ImageCacheMetadata())
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            cache.removeFromSharedTier(forKey: "key-\(index)", timeout: index % 2 == 0 ? 0.05 : 30)
        }
        tier.open()
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 20))
        let values = await tier.base.values(forKeys: (0..<64).map { "key-\($0)" })
        XCTAssertEqual((0..<64).filter { values["key-\($0)"] != nil }, [], "keys left in the tier")
    }

    /// Without a tier it does nothing and leaves nothing pending.
    func testWithoutATierItDoesNothing() throws {
        let cache = try ImageCache(path: folder.appendingPathComponent("none").path)
        cache.removeFromSharedTier(forKey: "k")
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 1))
    }
}
