@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// No statement of a read, write, flush, fold, trim or removal scans `manifest` or `access_log`: each costs
/// O(log n) however large the store, which is the "flat cost" promise. The test drives every path of a
/// `DiskCache` (inline and file values, access-time flushes and folds, LRU/cost/age trims, removals), then
/// asks SQLite for the query plan of every statement the connection prepared meanwhile.
///
/// What it found: `accessLogLength()` (`SELECT max(rowid) - min(rowid) …`, run before every access-time flush)
/// and the fold's `SELECT min(rowid), max(rowid)` scanned the whole log — SQLite's min/max optimisation applies
/// only to a query with a single `min()` or `max()`. With the log at its cap (the entry count, ≥ 65,536 rows)
/// every 1,024th read held the store lock for the scan: 9–11 ms at 100k entries and up to 88 ms at 1M in
/// `make bench`, the worst reads during a trim (101 / 152 ms against a goal of 50).
final class KVStorageQueryPlanTests: XCTestCase {
    /// Statements that read everything on purpose (documented O(n): `usage()`, `allKeys()`, `verify()`, the
    /// orphan scan of a recovery), by a fragment of their SQL.
    private static let wholeStoreStatements = ["GROUP BY filename IS NULL", "SELECT key FROM manifest ORDER BY", "PRAGMA"]

    func testNoStatementOnTheOperationPathsScansTheManifestOrTheAccessLog() throws {
        let directory = try TemporaryDirectory("kvcache-query-plans")
        defer { try? directory.remove() }
        // Given a cache with inline and file values
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_024)
        for index in 0..<3_000 {
            let value = testBytes(index % 10 == 0 ? 4_096 : 200, seed: index)
            try cache.setObject(value, forKey: "key-\(index)", extendedData: index % 3 == 0 ? Data([1, 2]) : nil)
        }
        // When every operation path runs: reads past the flush threshold, folds, replacements, removals,
        // extended data, and trims by count, cost and age
        for index in 0..<2_500 { _ = try cache.object(forKey: "key-\(index)") }
        _ = try cache.entry(forKey: "key-7")
        _ = try cache.containsObject(forKey: "key-8")
        _ = try cache.extendedData(forKey: "key-9")
        _ = try cache.setExtendedData(Data([3]), forKey: "key-10")
        try cache.setObject(testBytes(4_096, seed: 99), forKey: "key-11")
        try cache.setObject(testBytes(100, seed: 98), forKey: "key-20")
        try cache.removeObject(forKey: "key-12")
        _ = try cache.totalCount()
        _ = try cache.totalCost()
        try cache.core.storage.withLock { storage in
            storage.flushAccessTimes()
            _ = try storage.foldAccessLogBatch()
            _ = try storage.accessLogLength()
        }
        try cache.trim(toCount: 2_500)
        try cache.trim(toCost: try cache.totalCost() / 2)
        Thread.sleep(forTimeInterval: 0.01)
        try cache.trim(toAge: 0.005)
        cache.core.waitForCheckpoint()

        // Then no statement prepared on the way scans a table of the store
        let plans = try cache.core.storage.withLock { storage in
            try storage.database.preparedSQL.map { sql in (sql, try storage.database.queryPlan(sql)) }
        }
        XCTAssertGreaterThan(plans.count, 20, "the workload prepared fewer statements than it runs")
        var scans: [String] = []
        for (sql, plan) in plans where !Self.wholeStoreStatements.contains(where: { sql.contains($0) }) {
            let scanning = plan.filter { $0.hasPrefix("SCAN manifest") || $0.hasPrefix("SCAN access_log") }
            if !scanning.isEmpty { scans.append("\(sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")) → \(plan)") }
        }
        XCTAssertEqual(scans, [], "statements that scan the store:\n" + scans.joined(separator: "\n"))
    }
}
