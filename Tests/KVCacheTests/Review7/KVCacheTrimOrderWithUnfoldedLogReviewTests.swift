@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review 7 (held): reads whose access times sit in `access_log` unfolded — the background folds held back
/// (the queue suspended), as they are while a trim runs or the queue is busy — still steer an LRU trim:
/// `trim(toCount:)` flushes and folds the whole log before it evicts, so it removes only keys never read.
/// After the trim the owed folds run and bring the log back under its cap.
final class KVCacheTrimOrderWithUnfoldedLogReviewTests: XCTestCase {
    func testATrimEvictsOnlyKeysNotReadWhileTheFoldsWereHeldBack() throws {
        let directory = try TemporaryDirectory("kvcache-trim-order")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 1_200
        let cap = try cache.review7Fill(keys: keys, rows: 66000, timeZero: true)
        // A checkpoint still running would defer the reads' flush (`checkpointDefersAccessFlush`): let it end.
        cache.core.waitForCheckpoint()
        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        // The oldest-written keys, read: one flush of 1,024 to the log, then 100 more left pending.
        let read = Array(0..<(KVStorage.pendingAccessLimit + 100))
        for i in read { XCTAssertEqual(try cache.object(forKey: "key-\(i)"), testBytes(64, seed: i)) }
        XCTAssertGreaterThan(cache.core.storage.withLock { $0.owedLogFolds }, 0, "no folds owed: the attack did not set up")

        try cache.trim(toCount: keys - 60)
        XCTAssertEqual(try cache.totalCount(), keys - 60)
        for i in read { XCTAssertTrue(try cache.containsObject(forKey: "key-\(i)"), "key-\(i) was read, yet evicted") }

        cache.core.checkpointQueue.resume()
        suspended = false
        for _ in 0..<10_000 where cache.core.storage.withLock({ $0.owedLogFolds > 0 }) { cache.core.waitForCheckpoint() }
        cache.core.waitForCheckpoint()
        let length = try cache.review7LogLength()
        XCTAssertLessThanOrEqual(length, cap)
        XCTAssertEqual(cache.core.storage.withLock { $0.owedLogFolds }, 0)
    }
}
