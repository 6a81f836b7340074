@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Pending access times are kept by the manifest row's `rowid` (`KVStorage.recordAccess(ofKey:rowid:)`), and
/// saves and removals leave them: a `rowid` reused by another key never gives that key the time of the key
/// before, and an item reports the newer of its pending and manifest times (a save after a read is newer).
final class KVStoragePendingAccessTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// The key's `rowid` and `last_access_time` in the manifest.
    private func manifestRow(_ storage: KVStorage, _ key: String) throws -> (rowid: Int64, accessTime: Int64)? {
        storage.endReadSnapshot()
        let select = try storage.database.prepare("SELECT rowid, last_access_time FROM manifest WHERE key = ?1")
        defer { select.reset() }
        select.bind(key, at: 1)
        return try select.step() ? (select.int64(0), select.int64(1)) : nil
    }

    func testARowidReusedByAnotherKeyNeverTakesTheTimeOfTheKeyBefore() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        try storage.save(key: "a", value: Data([1]))
        try storage.save(key: "old", value: Data([2]))
        let old = try XCTUnwrap(try manifestRow(storage, "old"))
        XCTAssertNotNil(try storage.itemValue(forKey: "old"))
        try storage.removeItem(forKey: "old")
        try storage.save(key: "new", value: Data([3]))
        let new = try XCTUnwrap(try manifestRow(storage, "new"))
        XCTAssertEqual(new.rowid, old.rowid, "SQLite did not reuse the largest rowid: the test proves nothing")
        // The old key's pending time, made later than anything real: none of it may reach the new key.
        let future = new.accessTime + 3_600_000_000
        storage.pendingAccesses[old.rowid] = PendingAccess(key: "old", time: future)
        XCTAssertEqual(try storage.itemInfo(forKey: "new")?.lastAccessTime.manifestTime, new.accessTime)
        let item = try XCTUnwrap(try storage.item(forKey: "new"))
        XCTAssertEqual(item.lastAccessTime.manifestTime, new.accessTime, "the read reported the old key's time")
        let readTime = try XCTUnwrap(storage.pendingAccesses[new.rowid])
        XCTAssertTrue(exactlyEqual(readTime.key, "new"))
        XCTAssertLessThan(readTime.time, future)
        try storage.applyAccessTimes()
        XCTAssertEqual(try manifestRow(storage, "new")?.accessTime, readTime.time, "the fold gave the new key another time")
        XCTAssertNil(try manifestRow(storage, "old"))
    }

    func testASaveAfterAReadIsTheNewerAccess() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        try storage.save(key: "k", value: Data([1]))
        XCTAssertNotNil(try storage.itemValue(forKey: "k"))
        let read = try XCTUnwrap(storage.pendingAccesses.values.first).time
        // In place (the upsert keeps the row): the read stays pending, older than the save.
        try storage.save(key: "k", value: Data([2]))
        let saved = try XCTUnwrap(try manifestRow(storage, "k"))
        XCTAssertGreaterThan(saved.accessTime, read)
        XCTAssertEqual(try storage.itemInfo(forKey: "k")?.lastAccessTime.manifestTime, saved.accessTime)
        XCTAssertEqual(try storage.item(forKey: "k")?.lastAccessTime.manifestTime, saved.accessTime,
                       "the read before the save was reported as the last access")
        // Into a file (INSERT OR REPLACE: a new row, a new rowid): the same.
        let reread = try XCTUnwrap(storage.pendingAccesses[saved.rowid]).time
        try storage.save(key: "k", value: testBytes(5_000, seed: 1), filename: "k-file")
        let moved = try XCTUnwrap(try manifestRow(storage, "k"))
        XCTAssertNotEqual(moved.rowid, saved.rowid)
        XCTAssertGreaterThan(moved.accessTime, reread)
        XCTAssertEqual(try storage.item(forKey: "k")?.lastAccessTime.manifestTime, moved.accessTime)
        // Folded, the newest time wins whatever the order of the pending entries.
        let last = try XCTUnwrap(storage.pendingAccesses[moved.rowid]).time
        try storage.applyAccessTimes()
        XCTAssertEqual(try manifestRow(storage, "k")?.accessTime, last)
        XCTAssertTrue(storage.pendingAccesses.isEmpty)
    }

    func testAReadReportsThePendingTimeOfTheReadBefore() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        for (key, filename) in [("inline", nil), ("file", "f")] as [(String, String?)] {
            try storage.save(key: key, value: testBytes(3_000, seed: 2), filename: filename)
            let written = try XCTUnwrap(try manifestRow(storage, key))
            XCTAssertEqual(try storage.item(forKey: key)?.lastAccessTime.manifestTime, written.accessTime, key)
            let first = try XCTUnwrap(storage.pendingAccesses[written.rowid]).time
            XCTAssertGreaterThan(first, written.accessTime, key)
            XCTAssertEqual(try storage.itemInfo(forKey: key)?.lastAccessTime.manifestTime, first, key)
            XCTAssertEqual(try storage.item(forKey: key)?.lastAccessTime.manifestTime, first, key)
            XCTAssertGreaterThan(try XCTUnwrap(storage.pendingAccesses[written.rowid]).time, first, key)
        }
    }

    /// Two keys equal after Unicode normalisation, and two equal up to a NUL, are two rows with two pending
    /// times: folded, each gets its own.
    func testKeysEqualAsStringsButNotAsBytesKeepTheirOwnTimes() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let keys = ["\u{e9}", "e\u{301}", "a\u{0}x", "a\u{0}y"]
        for (i, key) in keys.enumerated() { try storage.save(key: key, value: Data([UInt8(i)])) }
        var reads: [Int64] = []
        for key in keys {
            XCTAssertNotNil(try storage.itemValue(forKey: key))
            let rowid = try XCTUnwrap(try manifestRow(storage, key)).rowid
            reads.append(try XCTUnwrap(storage.pendingAccesses[rowid]).time)
        }
        XCTAssertEqual(storage.pendingAccesses.count, keys.count)
        try storage.applyAccessTimes()
        XCTAssertEqual(try keys.map { try XCTUnwrap(try manifestRow(storage, $0)).accessTime }, reads)
    }
}
