@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review of 89bd1b8: pending access times kept by the manifest row's `rowid` instead of by the key's bytes;
/// saves and removals no longer dropped a key's pending time; `exactlyEqual`'s same-representation fast
/// path; statements without a database reference. The first three tests failed on 89bd1b8 (a live key's
/// read dropped while stale entries held the hard limit; another instance's replace of a row hid our pending
/// read); the rowid keying was reverted, and the rest held (rowid reuse, replaced rows, `removeAll`, odd keys,
/// the fast path, error messages, bounded pending state).
final class KVCacheRowidAccessReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    // MARK: - Helpers

    /// The manifest `rowid` of `key`, read on a connection of its own (no snapshot of `storage`'s).
    private func rowid(_ key: String) throws -> Int64? {
        let database = try SQLiteDatabase(path: directory.path + "/manifest.sqlite", busyTimeout: 5_000, faults: nil, create: false)
        defer { database.close() }
        let select = try database.prepare("SELECT rowid FROM manifest WHERE key = ?1")
        defer { select.reset() }
        select.bind(key, at: 1)
        return try select.step() ? select.int64(0) : nil
    }

    private func keys(_ storage: KVStorage, _ candidates: [String]) throws -> [String] {
        try candidates.filter { try storage.containsItem(forKey: $0) }
    }

    // MARK: - Failing: stale entries of removed / re-saved keys fill the hard limit

    /// While `access_log` is past its cap (`DiskCache`: `defersLogFolds`), reads stay pending up to
    /// `pendingAccessHardLimit` keys, and a read of a key not pending is then dropped. Before 89bd1b8 removing
    /// pending keys took their entries out (`removeRows`), so a later read of another key was recorded; now the
    /// removed keys' entries stay until a flush (which a full log never does from a read), and the read of a
    /// live key is dropped: its `lastAccessTime` is older than the read that returned, and an LRU trim evicts it
    /// before keys never read since it was saved.
    func testAReadAfterRemovalsWhileTheLogIsFullIsRecorded() throws {
        try assertReadAfterFreeingPendingSlotsIsRecorded { storage, keys in
            try storage.removeItems(forKeys: keys)
        }
    }

    /// The same with saves: a save of a pending key used to take its entry out (`placeAndCommit`,
    /// `saveInlineIfNoFile`); now it stays (`KVStorage+Save.swift`: "A pending read of the key stays").
    func testAReadAfterSavesOfPendingKeysWhileTheLogIsFullIsRecorded() throws {
        try assertReadAfterFreeingPendingSlotsIsRecorded { storage, keys in
            for key in keys { try storage.save(key: key, value: Data([7])) }
        }
    }

    private func assertReadAfterFreeingPendingSlotsIsRecorded(
        free: (KVStorage, [String]) throws -> Void, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let hard = KVStorage.pendingAccessHardLimit
        // "old" is saved first: the least recently used until it is read.
        try storage.save(key: "old", value: Data([1]))
        usleep(2_000)
        for i in 0..<(hard + 100) { try storage.save(key: "k\(i)", value: Data([2])) }
        // As DiskCache runs it, with the log past its cap (a long run of reads between two trims).
        storage.defersLogFolds = true
        storage.stepDuration = .infinity
        storage.endReadSnapshot()
        try storage.database.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 66000)
            INSERT INTO access_log (key, time) SELECT 'gone-' || i, i FROM n
            """)
        for i in 0..<hard { XCTAssertNotNil(try storage.itemValue(forKey: "k\(i)")) }
        XCTAssertEqual(storage.pendingAccessTimes.count, hard, file: file, line: line)
        XCTAssertTrue(storage.accessLogFull, file: file, line: line)
        // 100 pending keys removed (or saved again): 100 slots free, as before 89bd1b8.
        try free(storage, (0..<100).map { "k\($0)" })
        let beforeRead = Date()
        XCTAssertEqual(try storage.itemValue(forKey: "old"), Data([1]))
        XCTAssertEqual(storage.accessTimesDropped, 0, "the read of a live key was dropped (pending: \(storage.pendingAccessTimes.count), of which removed/re-saved keys' stale entries hold the slots)", file: file, line: line)
        let info = try XCTUnwrap(try storage.itemInfo(forKey: "old"))
        XCTAssertGreaterThanOrEqual(info.lastAccessTime.timeIntervalSince1970, beforeRead.timeIntervalSince1970 - 0.001,
                                    "itemInfo's lastAccessTime is older than a read that returned", file: file, line: line)
        // LRU: the one entry a trim removes must not be "old", read after every "k…" was saved.
        let count = try storage.itemsCount()
        try storage.removeItems(toFitCount: count - 1)
        XCTAssertTrue(try storage.containsItem(forKey: "old"), "the LRU trim evicted the key read last", file: file, line: line)
    }

    // MARK: - Failing: another instance's save whose stamp precedes our read

    /// Instance Y saves a file value for "k" (`INSERT OR REPLACE`: a new `rowid`), its stamp taken before it
    /// waits for the write lock; meanwhile instance X reads "k" (the old row) and returns. X's pending read is
    /// kept under the old `rowid`, so X's next `itemInfo`/`item` of "k" (the new row) no longer sees it and
    /// reports Y's older save time: older than a read that returned in this very instance (before 89bd1b8, the
    /// pending time by key was reported). The fold, by key, later raises the manifest to X's read: the time
    /// `itemInfo` reports then moves.
    func testItemInfoIsNotOlderThanOurReadWhenAnotherInstanceReplacedTheRowMeanwhile() throws {
        let x = try KVStorage(path: directory.path, type: .mixed)
        defer { x.close() }
        let y = try KVStorage(path: directory.path, type: .mixed)
        defer { y.close() }
        let old = testBytes(30_000, seed: 1), new = testBytes(30_000, seed: 2)
        try y.save(key: "k", value: old, filename: "f1")
        let rowidBefore = try XCTUnwrap(try rowid("k"))

        // A third connection holds the write lock, so Y's save waits after taking its stamp.
        let blocker = try SQLiteDatabase(path: directory.path + "/manifest.sqlite", busyTimeout: 5_000, faults: nil)
        defer { blocker.close() }
        try blocker.execute("BEGIN IMMEDIATE")
        let writer = SendableBox(y)
        let saved = expectation(description: "Y saved")
        DispatchQueue.global().async {
            do { try writer.value.save(key: "k", value: new, filename: "f2") } catch { XCTFail("Y's save: \(error)") }
            saved.fulfill()
        }
        usleep(300_000) // Y has its stamp and waits on the write lock
        let beforeRead = Date()
        XCTAssertEqual(try x.item(forKey: "k")?.value, old)
        try blocker.execute("COMMIT")
        wait(for: [saved], timeout: 30)
        let rowidAfter = try XCTUnwrap(try rowid("k"))
        XCTAssertNotEqual(rowidBefore, rowidAfter, "INSERT OR REPLACE kept the rowid")

        let info = try XCTUnwrap(try x.itemInfo(forKey: "k"))
        XCTAssertGreaterThanOrEqual(info.lastAccessTime.timeIntervalSince1970, beforeRead.timeIntervalSince1970 - 0.001,
                                    "itemInfo reports Y's save (\(info.lastAccessTime)), older than X's own read after \(beforeRead)")
        let item = try XCTUnwrap(try x.item(forKey: "k"))
        XCTAssertEqual(item.value, new)
        XCTAssertGreaterThanOrEqual(item.lastAccessTime.timeIntervalSince1970, beforeRead.timeIntervalSince1970 - 0.001,
                                    "item's lastAccessTime (the newest access before this read) is older than X's previous read")
    }

    // MARK: - Attacks that held

    /// Delete the max-rowid row, save a new key (same rowid): the new key's read reports its own save time,
    /// not the deleted key's pending read; `itemInfo` too; the LRU order is right.
    func testAReusedRowidGivesTheNewKeyNoTimeOfTheOldOne() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        try storage.save(key: "a", value: Data([1]))
        usleep(2_000)
        try storage.save(key: "b", value: Data([2]))
        usleep(2_000)
        try storage.save(key: "c", value: Data([3]))
        let rowidC = try XCTUnwrap(try rowid("c"))
        usleep(2_000)
        XCTAssertNotNil(try storage.item(forKey: "c"))  // pending under c's rowid
        try storage.removeItem(forKey: "c")
        usleep(5_000)
        let beforeSave = Date()
        try storage.save(key: "d", value: Data([4]))
        XCTAssertEqual(try rowid("d"), rowidC, "SQLite did not reuse the rowid")
        let info = try XCTUnwrap(try storage.itemInfo(forKey: "d"))
        XCTAssertGreaterThanOrEqual(info.lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        let item = try XCTUnwrap(try storage.item(forKey: "d"))
        XCTAssertGreaterThanOrEqual(item.lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        XCTAssertNil(try storage.itemInfo(forKey: "c"))
        // LRU: b (saved second, never read) goes first; c's stale pending read finds no row.
        usleep(2_000)
        XCTAssertNotNil(try storage.itemValue(forKey: "a"))
        try storage.removeItems(toFitCount: 2)
        XCTAssertEqual(try keys(storage, ["a", "b", "c", "d"]), ["a", "d"])
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// The same when another instance removes the key and saves a new one into the rowid this instance
    /// holds a pending read for; and a key saved again by the other instance keeps the newer of the times.
    func testAnotherInstancesRowidReuseDoesNotMixKeys() throws {
        let x = try KVStorage(path: directory.path, type: .sqlite)
        defer { x.close() }
        let y = try KVStorage(path: directory.path, type: .sqlite)
        defer { y.close() }
        for key in ["a", "b", "c"] { try y.save(key: key, value: Data([1])); usleep(2_000) }
        XCTAssertNotNil(try x.itemValue(forKey: "c"))
        let rowidC = try XCTUnwrap(try rowid("c"))
        try y.removeItem(forKey: "c")
        usleep(5_000)
        let beforeSave = Date()
        try y.save(key: "d", value: Data([4]))
        XCTAssertEqual(try rowid("d"), rowidC)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(try x.itemInfo(forKey: "d")).lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(try x.item(forKey: "d")).lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        // c back (after d): a new row; x's stale pending read of the old c is older.
        usleep(2_000)
        try y.save(key: "c", value: Data([5]))
        usleep(2_000)
        XCTAssertNotNil(try x.itemValue(forKey: "a"))
        usleep(2_000)
        XCTAssertNotNil(try x.itemValue(forKey: "d"))
        x.flushAccessTimes()
        // LRU: b (saved second, never read) then c (saved again) go first.
        try y.removeItems(toFitCount: 3)
        XCTAssertEqual(try keys(y, ["a", "b", "c", "d"]), ["a", "c", "d"])
        try y.removeItems(toFitCount: 2)
        XCTAssertEqual(try keys(y, ["a", "b", "c", "d"]), ["a", "d"])
    }

    /// A file value saved again gets a new rowid (`INSERT OR REPLACE`): within one instance the item's time
    /// is the newest access (the save), the old rowid's pending read neither leaks nor wins, the trim's order
    /// holds.
    func testAReplacedFileRowKeepsTheNewestTime() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        try storage.save(key: "k", value: testBytes(20_000, seed: 1), filename: "f1")
        usleep(2_000)
        try storage.save(key: "other", value: Data([1]))
        let first = try XCTUnwrap(try rowid("k"))
        usleep(2_000)
        XCTAssertNotNil(try storage.item(forKey: "k"))
        usleep(2_000)
        let beforeSave = Date()
        try storage.save(key: "k", value: testBytes(20_000, seed: 2), filename: "f2")
        XCTAssertNotEqual(try rowid("k"), first)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(try storage.itemInfo(forKey: "k")).lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        let beforeRead = Date()
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(try storage.item(forKey: "k")).lastAccessTime, beforeSave.addingTimeInterval(-0.001))
        let again = try XCTUnwrap(try storage.item(forKey: "k"))
        XCTAssertGreaterThanOrEqual(again.lastAccessTime, beforeRead.addingTimeInterval(-0.001), "the previous read was not reported")
        try storage.removeItems(toFitCount: 1)
        XCTAssertEqual(try keys(storage, ["k", "other"]), ["k"])
    }

    /// `removeAllItems` (this instance's, which drops pending times, and another instance's, which leaves
    /// rowids from 1 for new keys) mixes no key's time into another's.
    func testRemoveAllThenNewKeysInTheSameRowids() throws {
        let x = try KVStorage(path: directory.path, type: .sqlite)
        defer { x.close() }
        let y = try KVStorage(path: directory.path, type: .sqlite)
        defer { y.close() }
        for key in ["a", "b", "c"] { try x.save(key: key, value: Data([1])) }
        for key in ["a", "b", "c"] { XCTAssertNotNil(try x.itemValue(forKey: key)) }
        try y.removeAllItems()
        usleep(5_000)
        let beforeSave = Date()
        for key in ["e", "f", "g"] { try y.save(key: key, value: Data([2])) }
        XCTAssertEqual(try ["e", "f", "g"].map { try rowid($0) }, [1, 2, 3])
        for key in ["e", "f", "g"] {
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(try x.itemInfo(forKey: key)).lastAccessTime, beforeSave.addingTimeInterval(-0.001), key)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(try x.item(forKey: key)).lastAccessTime, beforeSave.addingTimeInterval(-0.001), key)
        }
        try x.removeAllItems()
        XCTAssertEqual(x.pendingAccessTimes.count, 0)
        try x.save(key: "h", value: Data([3]))
        XCTAssertNotNil(try x.item(forKey: "h"))
        XCTAssertEqual(x.pendingAccessTimes.count, 1)
    }

    /// Keys with NUL and keys equal after Unicode normalisation are distinct rows: each read reports and
    /// records its own key's time.
    func testNULAndCanonicallyEquivalentKeysKeepTheirOwnTimes() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let keys = ["a\u{0}x", "a\u{0}y", "\u{e9}", "e\u{301}"]
        for key in keys { try storage.save(key: key, value: Data(key.utf8)); usleep(2_000) }
        let saved = try keys.map { try XCTUnwrap(try storage.itemInfo(forKey: $0)).lastAccessTime }
        XCTAssertNotNil(try storage.item(forKey: keys[0]))
        XCTAssertNotNil(try storage.item(forKey: keys[2]))
        XCTAssertEqual(try storage.itemInfo(forKey: keys[1])?.lastAccessTime, saved[1])
        XCTAssertEqual(try storage.itemInfo(forKey: keys[3])?.lastAccessTime, saved[3])
        XCTAssertEqual(try storage.item(forKey: keys[1])?.lastAccessTime, saved[1])
        XCTAssertEqual(try storage.item(forKey: keys[3])?.lastAccessTime, saved[3])
        XCTAssertEqual(Set(storage.pendingAccessTimes.keys.map { Array($0.base.utf8) }), Set(keys.map { Array($0.utf8) }))
        // LRU: a\0x and é read first, then a\0y and e+◌́: trim to 2 keeps the latter two.
        try storage.removeItems(toFitCount: 2)
        XCTAssertEqual(try self.keys(storage, keys).map { Array($0.utf8) }, [keys[1], keys[3]].map { Array($0.utf8) })
    }

    /// `exactlyEqual`'s fast path: the same representation is equal; different small or large strings of the
    /// same length, canonically equivalent ones, and a NUL-suffixed one are not.
    func testExactlyEqualFastPath() {
        let large = String(repeating: "x", count: 100)
        let same = large
        XCTAssertTrue(exactlyEqual(large, same))
        var other = large
        other.removeLast()
        other.append("y")
        XCTAssertFalse(exactlyEqual(large, other))
        XCTAssertFalse(exactlyEqual("abc", "abd"))
        XCTAssertFalse(exactlyEqual("\u{e9}", "e\u{301}"))
        XCTAssertFalse(exactlyEqual("a", "a\u{0}"))
        XCTAssertTrue(exactlyEqual("a\u{0}", "a\u{0}"))
        XCTAssertTrue(exactlyEqual(large, String(repeating: "x", count: 100)))
    }

    /// A failed step's error still names the statement (from `sqlite3_sql`) and SQLite's message.
    func testAStepErrorKeepsTheOperationAndMessage() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        storage.endReadSnapshot()
        let insert = try storage.database.prepare("INSERT INTO totals (id, count, size) VALUES (2, 0, 0)")
        defer { insert.reset() }
        do {
            try insert.run()
            XCTFail("no error")
        } catch {
            guard case .sqlite(_, let message, let operation) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(operation, "INSERT INTO totals (id, count, size) VALUES (2, 0, 0)")
            XCTAssertTrue(message.contains("constraint"), message)
        }
        // A hot statement's error names its SQL too.
        let select = try storage.database.prepare(.selectItem)
        XCTAssertEqual(select.sql, HotStatement.selectItem.sql)
    }

    /// Pending entries stay bounded by the hard limit under churn: removals, re-saves and rowid reuse.
    func testPendingStaysBoundedUnderChurn() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        var most = 0
        for round in 0..<3_000 {
            let key = "k\(round)"
            try storage.save(key: key, value: Data([1]))
            XCTAssertNotNil(try storage.itemValue(forKey: key))
            if round % 2 == 0 { try storage.removeItem(forKey: key) }
            most = max(most, storage.pendingAccessTimes.count)
        }
        XCTAssertLessThanOrEqual(most, KVStorage.pendingAccessLimit)
    }
}
