@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// A read (or write) that finds `access_log` grown past its cap keeps its access times in memory and leaves the folds
/// of the log into the manifest to `DiskCache`'s background queue, one batch per store-lock hold, until the
/// log is back under its cap: folding them inside the read rewrote up to 4 × 256 rows (2 KB inline values included) while that read held the
/// store lock — the worst read during a 10 % trim of a 100k-entry store (85–98 ms; at 1M the log never
/// reaches its cap, which is the entry count, during the trim).
final class DiskCacheAccessLogFoldTests: XCTestCase {
    func testAFlushIntoAFullLogLeavesTheFoldsToTheBackgroundQueue() throws {
        let directory = try TemporaryDirectory("kvcache-access-fold")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 1_100
        for i in 0..<keys { try cache.setObject(testBytes(64, seed: i), forKey: "key-\(i)") }
        // An access log past its cap (65,536 rows: the store holds fewer entries), as a long run of reads
        // leaves it between two trims.
        let (cap, before) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> (Int64, Int64) in
            // Whole batches, so the folds owed can be counted (`DiskCacheFoldStepDurationTests` cuts them short).
            storage.stepDuration = .infinity
            storage.endReadSnapshot()
            try storage.database.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70000)
                INSERT INTO access_log (key, time) SELECT 'key-' || (i % \(keys)), i FROM n
                """)
            return (try storage.accessLogCap(), try storage.accessLogLength())
        }
        XCTAssertGreaterThan(before, cap)
        let foldsBefore = cache.core.storage.withLock { $0.accessLogFolds }

        // Hold back the background queue: whatever is folded meanwhile was folded by the reads themselves.
        // A checkpoint still running would defer the reads' flush (`checkpointDefersAccessFlush`): let it end.
        cache.core.waitForCheckpoint()
        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        // The 1,024th distinct key read would append the pending access times; the log is past its cap, so
        // they stay in memory and the folds are owed.
        for i in 0..<KVStorage.pendingAccessLimit { XCTAssertEqual(try cache.object(forKey: "key-\(i)"), testBytes(64, seed: i)) }
        let (appends, foldsByReads, pending) = cache.core.storage.withLock {
            ($0.accessLogAppends, $0.accessLogFolds - foldsBefore, $0.pendingAccessTimes.count)
        }
        XCTAssertEqual(appends, 0, "a read appended to a log past its cap")
        XCTAssertEqual(pending, KVStorage.pendingAccessLimit)
        XCTAssertEqual(foldsByReads, 0, "a read folded the access log while it held the store lock")

        // The background queue folds what the flush owed, one batch per task and lock hold.
        cache.core.checkpointQueue.resume()
        suspended = false
        // One batch per task, each task scheduling the next: wait for the queue until nothing is owed.
        for _ in 0..<10_000 where cache.core.storage.withLock({ $0.owedLogFolds > 0 }) { cache.core.waitForCheckpoint() }
        cache.core.waitForCheckpoint()
        let (folds, after) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> (Int, Int64) in
            (storage.accessLogFolds - foldsBefore, try storage.accessLogLength())
        }
        // All the log was over its cap by (each batch its own lock hold), not only the 4 a read folded.
        let over = before - cap
        XCTAssertEqual(Int64(folds), (over + KVStorage.accessFoldBatch - 1) / KVStorage.accessFoldBatch, "the owed folds did not run")
        XCTAssertEqual(after, before - Int64(folds) * KVStorage.accessFoldBatch)
        XCTAssertLessThanOrEqual(after, cap)
        // Back under its cap: the next read appends what was pending.
        XCTAssertEqual(try cache.object(forKey: "key-0"), testBytes(64, seed: 0))
        XCTAssertEqual(cache.core.storage.withLock { $0.accessLogAppends }, 1)

        // The trim still orders by the access times: the 50 it removes are among the 76 keys not read.
        try cache.trim(toCount: keys - 50)
        XCTAssertEqual(try cache.totalCount(), keys - 50)
        for i in 0..<KVStorage.pendingAccessLimit { XCTAssertEqual(try cache.object(forKey: "key-\(i)"), testBytes(64, seed: i), "key-\(i)") }
    }

    /// With the background folds starved (their queue suspended), a long run of reads of many keys keeps
    /// `access_log` within its cap plus `pendingAccessHardLimit` rows and the pending times within that many
    /// keys, folds nothing inside a read, and counts the reads it could not record; once the folds run again
    /// the log is back under its cap and reads append again. (Before, every flush appended its 1,024 rows
    /// whatever the log's length: on a loaded machine `KVCacheAccessLogGrowthReviewTests` saw 200k rows.)
    func testStarvedFoldsKeepTheLogAndThePendingTimesBounded() throws {
        let directory = try TemporaryDirectory("kvcache-access-fold")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 6_000
        let cap = try cache.review7Fill(keys: keys, valueSize: 32, rows: 65_000)  // a log just under its cap
        let (appendsBefore, foldsBefore) = cache.core.storage.withLock { ($0.accessLogAppends, $0.accessLogFolds) }

        // A checkpoint still running would defer the reads' flush (`checkpointDefersAccessFlush`): let it end.

        cache.core.waitForCheckpoint()

        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        var longest: Int64 = 0, mostPending = 0
        for round in 0..<3 {
            for i in 0..<keys {
                XCTAssertEqual(try cache.object(forKey: "key-\((i + round * 977) % keys)"), testBytes(32, seed: (i + round * 977) % keys))
                if i % 64 == 0 {
                    let (length, pending) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> (Int64, Int) in
                        (try storage.accessLogLength(), storage.pendingAccessTimes.count)
                    }
                    longest = max(longest, length)
                    mostPending = max(mostPending, pending)
                }
            }
        }
        let (appends, foldsByReads, dropped, full) = cache.core.storage.withLock {
            ($0.accessLogAppends - appendsBefore, $0.accessLogFolds - foldsBefore, $0.accessTimesDropped, $0.accessLogFull)
        }
        XCTAssertLessThanOrEqual(longest, cap + Int64(KVStorage.pendingAccessHardLimit), "access_log grew past its bound")
        XCTAssertLessThanOrEqual(mostPending, KVStorage.pendingAccessHardLimit)
        XCTAssertEqual(foldsByReads, 0, "a read folded the access log while it held the store lock")
        XCTAssertEqual(appends, 1, "one flush takes the log past its cap; then none until the folds catch up")
        XCTAssertGreaterThan(dropped, 0, "18,000 reads of 6,000 keys never reached the hard limit")
        XCTAssertTrue(full)

        cache.core.checkpointQueue.resume()
        suspended = false
        for _ in 0..<10_000 where cache.core.storage.withLock({ $0.owedLogFolds > 0 }) { cache.core.waitForCheckpoint() }
        cache.core.waitForCheckpoint()
        let (after, stillFull) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> (Int64, Bool) in
            (try storage.accessLogLength(), storage.accessLogFull)
        }
        XCTAssertFalse(stillFull, "the folds caught up but reads still record nothing")
        XCTAssertLessThanOrEqual(after, cap)
        // Reads append again: the pending times (up to the hard limit) go out with the next read.
        let appendsNow = cache.core.storage.withLock { $0.accessLogAppends }
        _ = try cache.object(forKey: "key-0")
        XCTAssertEqual(cache.core.storage.withLock { $0.accessLogAppends }, appendsNow + 1)
    }

    /// The WAL seen long (here: this connection's frame count left stale, as when another process's commit
    /// restarted the WAL after ours) while `access_log` is full: folds wait for the WAL and reads commit
    /// nothing, so only a checkpoint can end it. The dropped reads ask for one; its result corrects the
    /// count, the folds run, and reads are recorded again.
    func testALongWALAndAFullLogDoNotLeaveReadsUnrecordedForGood() throws {
        let directory = try TemporaryDirectory("kvcache-access-fold")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 6_000
        let cap = try cache.review7Fill(keys: keys, valueSize: 32, rows: 66_000)  // a log past its cap
        cache.core.waitForCheckpoint()
        cache.core.storage.withLock { storage in
            storage.database.walState?.frames = KVStorage.inlineCheckpointFrames - 1
            storage.database.walState?.backfilled = 0
            // The fill's frames would make a checkpoint due at the first read (whose result would end the
            // state before it is seen): nothing is due now.
            _ = storage.database.takeUncheckpointedFrames()
        }
        XCTAssertTrue(cache.core.storage.withLock { $0.walIsLong })
        let appendsBefore = cache.core.storage.withLock { $0.accessLogAppends }
        for round in 0..<3 {
            for i in 0..<keys { _ = try cache.object(forKey: "key-\((i + round * 977) % keys)") }
        }
        XCTAssertGreaterThan(cache.core.storage.withLock { $0.accessTimesDropped }, 0)
        for _ in 0..<10_000 where cache.core.storage.withLock({ $0.owedLogFolds > 0 || $0.checkpointWanted }) {
            cache.core.waitForCheckpoint()
        }
        cache.core.waitForCheckpoint()
        let (long, full, length) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> (Bool, Bool, Int64) in
            (storage.walIsLong, storage.accessLogFull, try storage.accessLogLength())
        }
        XCTAssertFalse(long, "the checkpoint's result did not correct the stale WAL count")
        XCTAssertFalse(full, "the folds never ran: reads stay unrecorded")
        XCTAssertLessThanOrEqual(length, cap)
        // Reads were recorded again before the rounds ended (18,000 reads, 4,096 kept at most while it lasted).
        XCTAssertGreaterThan(cache.core.storage.withLock { $0.accessLogAppends }, appendsBefore, "reads are not recorded again")
    }
}

/// Pending access times go to `access_log` at most `pendingAccessLimit` keys per hold of the store lock, also
/// after a deferral left up to `pendingAccessHardLimit` of them, and before a trim; the trim still orders by
/// every one of them.
final class DiskCacheAccessFlushBatchTests: XCTestCase {
    private func filledCache(_ directory: TemporaryDirectory, keys: Int) throws -> DiskCache {
        let cache = try DiskCache(path: directory.path)
        for i in 0..<keys { try cache.setObject(testBytes(32, seed: i), forKey: "key-\(i)") }
        cache.core.waitForCheckpoint()
        return cache
    }

    func testAReadAfterADeferralAppendsOneBatchNotAllThatIsPending() throws {
        let directory = try TemporaryDirectory("kvcache-flush-batch")
        defer { try? directory.remove() }
        let hard = KVStorage.pendingAccessHardLimit, batch = KVStorage.pendingAccessLimit
        let cache = try filledCache(directory, keys: hard + 10)
        cache.core.storage.withLock { $0.trimDefersAccessFlush = true }
        for i in 0..<(hard - 1) { _ = try cache.object(forKey: "key-\(i)") }
        let (appends, pending) = cache.core.storage.withLock { ($0.accessLogAppends, $0.pendingAccessTimes.count) }
        XCTAssertEqual(pending, hard - 1, "reads did not wait while the flush was deferred")
        _ = try cache.object(forKey: "key-\(hard - 1)")  // the hard limit: one batch goes out
        let (appendsAfter, pendingAfter) = cache.core.storage.withLock { ($0.accessLogAppends, $0.pendingAccessTimes.count) }
        XCTAssertEqual(appendsAfter, appends + 1)
        XCTAssertEqual(pendingAfter, hard - batch, "a read appended \(hard - pendingAfter) keys in one hold")
        cache.core.storage.withLock { $0.trimDefersAccessFlush = false }
        // The next reads each append one batch until fewer than a batch are pending.
        for i in 0..<3 { _ = try cache.object(forKey: "key-\(hard + i)") }
        let last = cache.core.storage.withLock { $0.pendingAccessTimes.count }
        XCTAssertLessThan(last, batch)
    }

    func testATrimAppendsAPendingBacklogInBatchesAndKeepsTheMostRecentlyRead() throws {
        let directory = try TemporaryDirectory("kvcache-flush-batch")
        defer { try? directory.remove() }
        let keys = 5_000, keep = 1_000
        let cache = try filledCache(directory, keys: keys)
        cache.core.storage.withLock { $0.trimDefersAccessFlush = true }
        // 4,000 reads, newest last, all still pending when the trim starts.
        for i in keep..<keys { _ = try cache.object(forKey: "key-\(i)") }
        cache.core.storage.withLock { $0.trimDefersAccessFlush = false }
        let (appends, pending) = cache.core.storage.withLock { ($0.accessLogAppends, $0.pendingAccessTimes.count) }
        XCTAssertEqual(pending, keys - keep)
        try cache.trim(toCount: keep)
        let appendsAfter = cache.core.storage.withLock { $0.accessLogAppends }
        XCTAssertGreaterThanOrEqual(appendsAfter - appends, (keys - keep) / KVStorage.pendingAccessLimit,
                                    "the pending times went out in fewer, larger holds")
        XCTAssertEqual(try cache.totalCount(), keep)
        // The most recently read quarter survives: the trim ordered by every pending time.
        let survivors = try (keys - keep..<keys).filter { try cache.containsObject(forKey: "key-\($0)") }
        XCTAssertEqual(survivors.count, keep, "recently read keys were trimmed as if never read")
    }
}
