@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67), attack on "nothing lost, no stuck state" in `DiskCache`: a flush that
/// finds `access_log` past its cap owes `ceil(over / 256)` folds, and reads append nothing while it is full. A
/// fold now may take off one row, so owing batches of 256 would leave the log full (reads unrecorded) once the
/// owed count ran out. With `stepDuration` 0 (one row per fold) the background folds must still bring the log
/// back under its cap, clear `accessLogFull`, and the reads after that are recorded again.
final class KVCacheFoldOwedDrainReviewTests: XCTestCase {
    func testOneRowFoldsStillDrainTheLogAndReadsAreRecordedAgain() throws {
        let directory = try TemporaryDirectory("kvcache-fold-owed-drain")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        cache.autoTrimInterval = 3_600
        let keys = 1_100
        let cap = try cache.review7Fill(keys: keys, rows: 65_536 + 1_500)
        cache.core.storage.withLock { $0.stepDuration = 0 }
        // A flush of 1,024 reads finds the log 2,524 rows past its cap: full, folds owed. The background queue
        // is held meanwhile (it drained the log before the check in one run); a running checkpoint ends first,
        // as it would defer the flush.
        cache.core.waitForCheckpoint()
        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        for n in 0..<(KVStorage.pendingAccessLimit + 10) { XCTAssertNotNil(try cache.object(forKey: "key-\(n % keys)")) }
        let sawFull = cache.core.storage.withLock { $0.accessLogFull || $0.owedLogFolds > 0 }
        cache.core.checkpointQueue.resume()
        suspended = false
        var drained = false
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            drained = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> Bool in
                try storage.accessLogLength() <= cap && !storage.accessLogFull
            }
            if drained { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let state = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> String in
            "length \(try storage.accessLogLength()) (cap \(cap)), full \(storage.accessLogFull), owed \(storage.owedLogFolds), folds \(storage.accessLogFolds)"
        }
        XCTAssertTrue(sawFull, "the flush did not find the log past its cap: \(state)")
        XCTAssertTrue(drained, "one-row folds left the log full: \(state)")
        // Reads are recorded again: a key never read gets a time newer than every other key's once flushed.
        let dropped = cache.core.storage.withLock { $0.accessTimesDropped }
        XCTAssertNotNil(try cache.object(forKey: "key-7"))
        try cache.core.storage.withLock { (storage: inout KVStorage) throws in
            XCTAssertEqual(storage.accessTimesDropped, dropped, "a read after the drain was dropped")
            try storage.applyAccessTimes()
            storage.endReadSnapshot()
            let newest = try storage.database.textRows("SELECT key FROM manifest ORDER BY last_access_time DESC LIMIT 1")
            XCTAssertEqual(newest, ["key-7"], "the read after the drain did not reach the manifest")
        }
    }
}
