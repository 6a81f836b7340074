@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// The bookkeeping that keeps a large store's costs flat (issue 14, "Flat cost at scale"): access times are
/// appended to a log instead of rewriting value rows, totals are kept in a row, a trim releases the store
/// lock between steps, and an open after a clean shutdown neither scans nor checks the manifest. The
/// timings themselves are in `make bench` ("KVCache at scale"); these tests hold the mechanisms.
final class KVStorageScaleTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-scale") }
    override func tearDownWithError() throws { try directory.remove() }

    /// `(key, last_access_time)` of every manifest row, straight from SQLite.
    private func manifestAccessTimes(_ storage: KVStorage) throws -> [String: Int64] {
        let select = try storage.database.prepare("SELECT key, last_access_time FROM manifest")
        defer { select.reset() }
        var times: [String: Int64] = [:]
        while try select.step() { times[select.text(0) ?? ""] = select.int64(1) }
        return times
    }

    /// A flush of pending access times appends to `access_log` and leaves every manifest row (2 KB inline
    /// values) as it was; the trim still evicts in LRU order once the log is folded.
    func testAccessTimeFlushDoesNotRewriteValueRows() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        for i in 0..<1_100 { try storage.save(key: "k\(i)", value: testBytes(2_048, seed: i)) }
        let before = try manifestAccessTimes(storage)
        let changesBefore = storage.database.totalChanges
        // Reads of the 1,024 oldest keys: the 1,024th distinct key flushes.
        for i in 0..<KVStorage.pendingAccessLimit { XCTAssertNotNil(try storage.itemValue(forKey: "k\(i)")) }
        XCTAssertTrue(storage.pendingAccessTimes.isEmpty, "the flush ran")
        XCTAssertEqual(storage.accessLogAppends, 1)
        let rewritten = try manifestAccessTimes(storage).filter { before[$0.key] != $0.value }.count
        XCTAssertEqual(rewritten, 0, "a flush must not rewrite manifest rows")
        XCTAssertEqual(storage.database.totalChanges - changesBefore, Int64(KVStorage.pendingAccessLimit),
                       "one narrow log row per key, nothing else")
        XCTAssertEqual(try storage.accessLogLength(), Int64(KVStorage.pendingAccessLimit))

        // The trim folds the log first: the 76 keys never read are the least recently used.
        try storage.removeItems(toFitCount: KVStorage.pendingAccessLimit)
        XCTAssertEqual(try storage.accessLogLength(), 0)
        for i in 0..<1_100 {
            XCTAssertEqual(try storage.containsItem(forKey: "k\(i)"), i < KVStorage.pendingAccessLimit, "k\(i)")
        }
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// A store written by schema version 1 (f51e949: no `access_log`, no `totals`) opens, is upgraded, and
    /// keeps every inline and file value; the totals start exact.
    func testVersion1StoreIsUpgradedKeepingEveryValue() throws {
        // Given: the version-1 manifest and files, written as that version laid them out.
        for folder in ["data", "tmp", "trash"] {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + folder, withIntermediateDirectories: true)
        }
        let old = try SQLiteDatabase(path: directory.path + "/manifest.sqlite", busyTimeout: 1_000, faults: nil)
        _ = try old.textRows("PRAGMA journal_mode=WAL")
        try old.execute(KVStorage.schema)
        var expected: [String: Data] = [:]
        for i in 0..<40 {
            let value = testBytes(i % 3 == 0 ? 30_000 + i : 500 + i, seed: i)
            let filename: String? = i % 3 == 0 ? "f\(i)" : nil
            if let filename { try value.write(to: URL(fileURLWithPath: directory.path + "/data/" + filename)) }
            let insert = try old.prepare("INSERT INTO manifest VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)")
            insert.bind("k\(i)", at: 1)
            insert.bind(filename, at: 2)
            insert.bind(Int64(value.count), at: 3)
            insert.bind(filename == nil ? value : nil, at: 4)
            insert.bind(Int64(1_000 + i), at: 5)
            insert.bind(Data("x\(i)".utf8), at: 6)
            try insert.run()
            insert.reset()
            expected["k\(i)"] = value
        }
        old.close()

        // When: opened by this version (twice: the upgrade runs once).
        for _ in 0..<2 {
            let storage = try KVStorage(path: directory.path, type: .mixed)
            XCTAssertEqual(try KVStorage.userVersion(storage.database), KVStorage.schemaVersion)
            XCTAssertNil(storage.recoveryError)
            // Then: every value and its extended data is there, and the totals match.
            XCTAssertEqual(try storage.itemsCount(), expected.count)
            XCTAssertEqual(try storage.itemsSize(), Int64(expected.values.reduce(0) { $0 + $1.count }))
            XCTAssertEqual(try storage.itemsCost(), expected.reduce(0) { total, entry in
                total + KVStorage.cost(keyBytes: entry.key.utf8.count, valueBytes: Int64(entry.value.count),
                                       isFile: entry.value.count >= 30_000,
                                       extendedDataBytes: "x\(entry.key.dropFirst())".utf8.count)
            }, "the cost of the rows a version-1 store held is counted at the upgrade")
            for (key, value) in expected {
                let item = try XCTUnwrap(try storage.item(forKey: key), key)
                XCTAssertEqual(item.value, value, key)
                XCTAssertEqual(item.extendedData, Data("x\(key.dropFirst())".utf8), key)
            }
            XCTAssertEqual(try storage._checkInvariants(), [])
            storage.close()
        }
    }

    /// A store of schema version 2 (totals without `cost`, its triggers) is upgraded to 3 at open: the cost of
    /// its rows is counted, the new triggers keep it, and an older writer's rows (through the same triggers)
    /// count too.
    func testVersion2StoreIsUpgradedWithTheCostOfItsRows() throws {
        var storage: KVStorage? = try KVStorage(path: directory.path, type: .mixed)
        let long = String(repeating: "u", count: 3_000)
        try storage!.save(key: long, value: testBytes(100, seed: 1), extendedData: testBytes(2_000, seed: 2))
        try storage!.save(key: "f", value: testBytes(10_000, seed: 3), filename: "f1")
        storage!.close()
        storage = nil
        // Back to version 2: no cost column, the version-2 triggers.
        let old = try SQLiteDatabase(path: directory.path + "/manifest.sqlite", busyTimeout: 1_000, faults: nil)
        try old.execute("""
            DROP TRIGGER manifest_totals_insert; DROP TRIGGER manifest_totals_delete; DROP TRIGGER manifest_totals_update;
            ALTER TABLE totals DROP COLUMN cost;
            """)
        try old.execute(KVStorage.schemaVersion2)
        try old.execute("PRAGMA user_version = 2")
        old.close()

        let upgraded = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try KVStorage.userVersion(upgraded.database), 3)
        let expected = KVStorage.cost(keyBytes: 3_000, valueBytes: 100, isFile: false, extendedDataBytes: 2_000)
            + KVStorage.cost(keyBytes: 1, valueBytes: 10_000, isFile: true, extendedDataBytes: 0)
        XCTAssertEqual(try upgraded.itemsCost(), expected)
        try upgraded.removeItem(forKey: long)
        XCTAssertEqual(try upgraded.itemsCost(), KVStorage.cost(keyBytes: 1, valueBytes: 10_000, isFile: true, extendedDataBytes: 0))
        XCTAssertEqual(try upgraded._checkInvariants(), [])
    }

    /// `itemsCount()`/`itemsSize()` (read from `totals`) equal `count(*)`/`sum(size)` and a model after
    /// every step of a seeded random mix of inline and file saves, overwrites, removals and trims, done by
    /// two instances on one folder. Reproduce with `KVCACHE_TOTALS_SEED`.
    func testTotalsStayExactUnderARandomizedModel() throws {
        let seed = ProcessInfo.processInfo.environment["KVCACHE_TOTALS_SEED"].flatMap { UInt64($0) } ?? 0x7074_A15E
        var rng = SplitMix64(seed: seed)
        let first = try KVStorage(path: directory.path, type: .mixed)
        let second = try KVStorage(path: directory.path, type: .mixed)
        var model: [String: Int] = [:]
        for step in 0..<800 {
            let storage = rng.next(upTo: 2) == 0 ? first : second
            let key = "k\(rng.next(upTo: 120))"
            switch rng.next(upTo: 10) {
            case 0...4:
                let size = rng.next(upTo: 3) == 0 ? 3_000 + rng.next(upTo: 3_000) : rng.next(upTo: 900)
                let filename: String? = size >= 3_000 ? "f-\(key)" : nil
                try storage.save(key: key, value: testBytes(size, seed: step), filename: filename)
                model[key] = size
            case 5, 6:
                try storage.removeItem(forKey: key)
                model[key] = nil
            case 7:
                _ = try storage.itemValue(forKey: key)
            case 8:
                let limit = 60 + rng.next(upTo: 60)
                try storage.removeItems(toFitCount: limit)
                // Which keys went depends on access order; the count is what the model can check.
                let kept = Set(try allKeys(first))
                model = model.filter { kept.contains($0.key) }
                XCTAssertLessThanOrEqual(model.count, limit, "seed \(seed) step \(step)")
            default:
                let bound = Int64(rng.next(upTo: 6_000))
                try storage.removeItems(largerThan: bound)
                model = model.filter { Int64($0.value) <= bound }
            }
            for storage in [first, second] {
                let count = try storage.itemsCount(), size = try storage.itemsSize()
                guard count == model.count, size == Int64(model.values.reduce(0, +)) else {
                    XCTFail("seed \(seed) (KVCACHE_TOTALS_SEED) step \(step): totals \(count)/\(size), model \(model.count)/\(model.values.reduce(0, +))")
                    return
                }
            }
        }
        let recount = try first.database.prepare("SELECT count(*), coalesce(sum(size), 0) FROM manifest")
        XCTAssertTrue(try recount.step())
        XCTAssertEqual(Int(recount.int64(0)), try first.itemsCount(), "seed \(seed)")
        XCTAssertEqual(recount.int64(1), try first.itemsSize(), "seed \(seed)")
        recount.reset()
    }

    private func allKeys(_ storage: KVStorage) throws -> [String] {
        storage.endReadSnapshot()
        let select = try storage.database.prepare("SELECT key FROM manifest")
        defer { select.reset() }
        var keys: [String] = []
        while try select.step() { keys.append(select.text(0) ?? "") }
        return keys
    }
}
