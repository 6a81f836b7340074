import Dispatch
import Foundation
import KVCache
import Synchronization
@testable import WebImage
import XCTest

/// Live `RetentionProbeTier`s (each removal below goes to a tier of its own, so a tier alive is a removal's
/// closure alive).
private let liveProbes = Atomic<Int>(0)
private let removalsAnswered = Atomic<Int>(0)

/// A tier that answers removals inline and counts its live instances.
private final class RetentionProbeTier: RemoteCacheTier {
    init() { liveProbes.add(1, ordering: .relaxed) }
    deinit { liveProbes.subtract(1, ordering: .relaxed) }
    func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) { completion(nil) }
    func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
        completion(.misses(keys))
    }
    func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
        completion?(true)
    }
    func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) {
        removalsAnswered.add(1, ordering: .relaxed)
        completion?(true)
    }
    var statistics: RemoteCacheStatistics { RemoteCacheStatistics() }
}

/// A tier whose writes stay in flight until `release()` (a busy server: some write always in flight).
private final class HeldWritesTier: RemoteCacheTier {
    private let held = Mutex<[@Sendable (Bool) -> Void]>([])
    func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) { completion(nil) }
    func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
        completion(.misses(keys))
    }
    func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
        held.withLock { $0.append(completion ?? { _ in }) }
    }
    func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) { completion?(true) }
    var statistics: RemoteCacheStatistics { RemoteCacheStatistics() }
    var heldCount: Int { held.withLock { $0.count } }
    func release() {
        let completions = held.withLock { held in defer { held = [] }; return held }
        for completion in completions { completion(true) }
    }
}

/// Defect (24f7133): every `removeFromSharedTier` registers a `pendingWrites.notify` block that dispatch keeps
/// (with the tier, the key and the group it captures) until the tier's writes drain — even once the removal
/// ran at its timeout. A busy server always has a shared-tier write in flight, so the group seldom or never
/// drains and each 415 (each removal) leaks its closure until then: unbounded growth under a flood of
/// non-image sources.
final class SharedTierRemovalRetentionReviewTests: XCTestCase {
    func testARemovalDoneAtItsTimeoutIsNotRetainedWhileOtherWritesStayInFlight() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("retention-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let busy = HeldWritesTier()
        let cache = try ImageCache(path: folder.path, sharedTier: busy)
        cache.storeInSharedTier(Data("in flight".utf8), forKey: "busy", metadata: ImageCacheMetadata())
        let heldDeadline = Date(timeIntervalSinceNow: 5)
        while busy.heldCount == 0, Date() < heldDeadline { usleep(5_000) }
        XCTAssertEqual(busy.heldCount, 1, "the write never reached the tier")

        let baseline = liveProbes.load(ordering: .relaxed)
        let answeredBefore = removalsAnswered.load(ordering: .relaxed)
        let count = 200
        for index in 0..<count {
            cache.sharedTier = RetentionProbeTier()
            cache.removeFromSharedTier(forKey: "not-an-image-\(index)", timeout: 0)
        }
        cache.sharedTier = nil
        // Every removal runs (at its timeout) and is answered...
        let deadline = Date(timeIntervalSinceNow: 10)
        while removalsAnswered.load(ordering: .relaxed) - answeredBefore < count, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(removalsAnswered.load(ordering: .relaxed) - answeredBefore, count, "removals not run at their timeout")
        // ...so nothing of theirs should stay alive (the timer's block is released just after it runs).
        let freedDeadline = Date(timeIntervalSinceNow: 3)
        while liveProbes.load(ordering: .relaxed) > baseline, Date() < freedDeadline { usleep(10_000) }
        XCTAssertEqual(liveProbes.load(ordering: .relaxed) - baseline, 0,
                       "removals already answered are still held (by pendingWrites.notify) while a write is in flight")

        busy.release()
        XCTAssertTrue(cache.waitForPendingSharedWrites(timeout: 5))
    }
}
