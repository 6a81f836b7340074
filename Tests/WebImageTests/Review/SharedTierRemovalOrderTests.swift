import Foundation
import KVCache
import Synchronization
@testable import WebImage
import XCTest

/// A removal from the shared tier waits for the writes of its key in flight when it was asked for, and only those
/// (session 27's read-only review): it waited for every write of the key until none was left, so a newer write
/// started after the removal (a fresh 200 after a no-store one) was deleted by it once both landed.
final class SharedTierRemovalOrderTests: XCTestCase {
    /// A tier whose writes land only when the test releases them, in the order it chooses.
    final class HeldTier: RemoteCacheTier {
        private let store = Mutex<[String: Data]>([:])
        private let held = Mutex<[(key: String, value: Data, completion: (@Sendable (Bool) -> Void)?)]>([])
        let removals = Mutex(0)
        func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) { completion(store.withLock { $0[key] }) }
        func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
            completion(RemoteCacheValues(requestedKeys: keys, values: store.withLock { t in keys.map { t[$0] } }))
        }
        func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
            held.withLock { $0.append((key, value, completion)) }
        }
        func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) {
            store.withLock { $0[key] = nil }
            removals.withLock { $0 += 1 }
            completion?(true)
        }
        var statistics: RemoteCacheStatistics { RemoteCacheStatistics() }
        var heldCount: Int { held.withLock { $0.count } }
        /// Lands the held write `index` (of those held now) and answers it.
        func release(_ index: Int) {
            let write = held.withLock { $0.remove(at: index) }
            store.withLock { $0[write.key] = write.value }
            write.completion?(true)
        }
        func envelope(_ key: String) -> Data? { store.withLock { $0[key] } }
    }

    private func wait(_ what: String, timeout: Double = 10, until condition: () -> Bool) {
        let end = Date().addingTimeInterval(timeout)
        while !condition(), Date() < end { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertTrue(condition(), what)
    }

    func testARemovalDoesNotWaitForNorDeleteAWriteStartedAfterIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tier-order-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tier = HeldTier()
        let cache = try ImageCache(path: directory.path, sharedTier: tier)
        let key = "https://example.com/a.png"
        cache.storeInSharedTier(Data("old".utf8), forKey: key, metadata: ImageCacheMetadata(scale: 1))
        wait("the first write reached the tier") { tier.heldCount == 1 }
        cache.removeFromSharedTier(forKey: key)
        cache.storeInSharedTier(Data("new".utf8), forKey: key, metadata: ImageCacheMetadata(scale: 1))
        wait("the second write reached the tier") { tier.heldCount == 2 }
        XCTAssertEqual(tier.removals.withLock { $0 }, 0, "the removal waits for the write before it")
        tier.release(0)                                   // the old write lands: now the removal runs
        // Well inside the removal's own 10-second timeout: it runs because its write landed.
        wait("the removal ran once the write before it landed, without waiting for the newer one", timeout: 3) {
            tier.removals.withLock { $0 } == 1
        }
        tier.release(0)                                   // the newer write lands after the removal
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 10))
        let envelope = try XCTUnwrap(tier.envelope(key), "the newer write was deleted by the older removal")
        XCTAssertEqual(SharedTierEnvelope.decode(envelope, key: key)?.data, Data("new".utf8))
    }
}
