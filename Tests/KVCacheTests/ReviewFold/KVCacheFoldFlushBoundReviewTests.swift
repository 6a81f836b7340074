@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67), attack on "a store nobody trims keeps a log at most about as long as it
/// has entries" (the top of KVStorage+AccessTime.swift) for a `KVStorage` used without `DiskCache` (no
/// `defersLogFolds`): a flush that finds the log past its cap folds "up to 4 × 256 = 1,024 rows, what one flush
/// appends at most", counting 256 rows per fold. A fold now stops after `stepDuration` (at least one row), so
/// when folds are cut short (a slow machine, large inline values, or `stepDuration` 0) each flush appends 1,024
/// rows and folds far fewer: the log grows with every flush, without bound.
final class KVCacheFoldFlushBoundReviewTests: XCTestCase {
    private func runReads(stepDuration: Double) throws {
        let directory = try TemporaryDirectory("kvcache-fold-flush-bound")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let keys = 1_100
        for i in 0..<keys { try storage.save(key: "key-\(i)", value: testBytes(64, seed: i)) }
        // The log right at its cap, as a long run of reads leaves it.
        storage.endReadSnapshot()
        try storage.database.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 65536)
            INSERT INTO access_log (key, time) SELECT 'key-' || (i % \(keys)), i FROM n
            """)
        let cap = try storage.accessLogCap()
        storage.stepDuration = stepDuration
        var longest: Int64 = 0
        let flushes = 24
        for n in 0..<(flushes * KVStorage.pendingAccessLimit) {
            XCTAssertNotNil(try storage.item(forKey: "key-\(n % keys)"))
            if n % 256 == 255 { longest = max(longest, try storage.accessLogLength()) }
        }
        // One flush of slack: the log may be a flush past its cap until that flush's folds run.
        XCTAssertLessThanOrEqual(
            longest, cap + Int64(KVStorage.pendingAccessLimit),
            "stepDuration \(stepDuration): access_log grew to \(longest) rows (cap \(cap)) over \(flushes) flushes")
        // And every read is still there to fold: nothing was dropped on the way.
        XCTAssertEqual(storage.accessTimesDropped, 0)
    }

    func testFlushesThatFoldOneRowAStepStillKeepTheLogNearItsCap() throws {
        try runReads(stepDuration: 0)
    }

    func testFlushesWithTheDefaultStepKeepTheLogNearItsCap() throws {
        try runReads(stepDuration: KVStorage.defaultStepDuration)
    }
}
