@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (attack; the code held when this test was written): the TEMP table `moved_files` (the names
/// rows stop using, see KVStorage+IntentJournal.swift) is emptied by `journalMovedFiles` just before the
/// COMMIT. Had a failed step of a replace (its COMMIT included: SQLITE_FULL from a full disk for the WAL)
/// left names in it, the connection's next write transaction would journal them, and when that is an
/// access-time flush or a fold, which run outside `write.lock`, `journal` would take `write.lock` inside the
/// open write transaction — the reverse of every writer's order (`write.lock`, then `BEGIN IMMEDIATE`):
/// beside a writer holding `write.lock` and waiting for the SQLite write lock, both would wait out the 5 s busy
/// timeout and the writer's save would fail with SQLITE_BUSY. The ROLLBACK undoes the trigger's inserts with
/// the delete, so nothing is left: checked for a fault at every SQLite step of the replace, with a descriptor
/// of the test holding `write.lock` (as such a writer does) while the instance flushes its access times.
final class KVCacheRolledBackMovedFilesReviewTests: XCTestCase {
    /// Lets a test thread use the storage while the test's thread waits (never both at once).
    private final class Box: @unchecked Sendable { // used by one thread at a time: the test waits for the other
        let storage: KVStorage
        init(_ storage: KVStorage) { self.storage = storage }
    }

    func testAFlushAfterAFailedCommitNeverWaitsForWriteLock() throws {
        var failedSaves = 0
        for call in 1...24 {
            let directory = try TemporaryDirectory("kvcache-rolled-back-moved-files")
            defer { try? directory.remove() }
            let faults = KVStorageFaults()
            let storage = try KVStorage(path: directory.path, type: .file, faults: faults)
            defer { storage.close() }
            try storage.save(key: "r", value: testBytes(3_000, seed: 1), filename: "r")
            XCTAssertEqual(try storage.itemValue(forKey: "r"), testBytes(3_000, seed: 1)) // a pending access time
            faults.fail(.sqliteStep, onCall: call, sqliteCode: 13) // SQLITE_FULL
            let saved = Result { () throws(KVCacheError) in
                try storage.save(key: "r", value: testBytes(4_000, seed: 2), filename: "r")
            }
            faults.disarm()
            // Every step of the replace fails once, the COMMIT (its last) included; then it succeeds.
            if case .success = saved { break }
            failedSaves += 1

            // Given: a writer of another instance holds write.lock (its own descriptor, as another process).
            let holder = open(directory.path + "/write.lock", O_RDWR | O_CLOEXEC)
            XCTAssertGreaterThanOrEqual(holder, 0)
            defer { Glibc.close(holder) }
            XCTAssertEqual(flock(holder, LOCK_EX), 0)
            // When: this instance appends its access times (a write transaction that moves no file).
            let box = Box(storage)
            let flushed = DispatchSemaphore(value: 0)
            Thread {
                box.storage.flushAccessTimes()
                flushed.signal()
            }.start()
            // Then: it never waits for write.lock (10 s: far more than an append of one row takes).
            let result = flushed.wait(timeout: .now() + 10)
            XCTAssertEqual(result, .success,
                           "step #\(call) failed: the access-time flush waited for write.lock inside its write transaction")
            flock(holder, LOCK_UN)
            if result != .success { flushed.wait() }
            XCTAssertEqual(try storage.itemValue(forKey: "r"), testBytes(3_000, seed: 1), "step #\(call): the old value")
            XCTAssertEqual(try storage._checkInvariants(), [], "step #\(call)")
        }
        XCTAssertGreaterThan(failedSaves, 4, "steps of the replace that failed")
    }
}
