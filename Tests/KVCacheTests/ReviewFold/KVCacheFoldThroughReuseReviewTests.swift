@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67), attack on `TrimLimits.foldThrough`: "the trim folds the log up to
/// there, so it orders entries by their accesses up to its start. Reads made while it runs are folded by the
/// next trim". `access_log` has no AUTOINCREMENT: once the trim's folds empty it, the next append takes rowid 1
/// again, at or below `foldThrough`, and the trim's next step folds a read made while it runs (pre-existing,
/// older than 5e2ba67; a fold that stops after one row leaves the trim more steps in which to meet such reads).
final class KVCacheFoldThroughReuseReviewTests: XCTestCase {
    func testATrimDoesNotFoldAReadMadeWhileItRunsAfterTheLogEmptied() throws {
        for duration in [0, Double.infinity] {
            let directory = try TemporaryDirectory("kvcache-fold-through-reuse")
            defer { try? directory.remove() }
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            defer { storage.close() }
            storage.stepDuration = duration
            for i in 0..<10 { try storage.save(key: "k\(i)", value: testBytes(8, seed: i)) }
            try storage.applyAccessTimes()
            // Before the trim: k9 read (one log row). As of the trim's start the LRU are k0…k4.
            XCTAssertNotNil(try storage.item(forKey: "k9"))
            storage.flushAccessTimes()
            var limits = TrimLimits(maxCount: 5)
            // The first step sets foldThrough and folds the log empty.
            XCTAssertTrue(try storage.trimStep(&limits))
            XCTAssertEqual(try storage.accessLogLength(), 0)
            // A read while the trim runs, appended (its rowid is 1 again, at or below foldThrough).
            XCTAssertNotNil(try storage.item(forKey: "k0"))
            storage.flushAccessTimes()
            var steps = 0
            while try storage.trimStep(&limits) { steps += 1; XCTAssertLessThan(steps, 100) }
            let left = try (0..<10).filter { try storage.itemInfo(forKey: "k\($0)") != nil }
            XCTAssertEqual(left, [5, 6, 7, 8, 9], "duration \(duration): the trim folded a read made while it ran")
        }
    }
}
