@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// What an item reports as its last access, with reads pending in memory (`KVStorage.pendingAccessTimes`):
/// the read before this one, never a read older than a later save, and each key its own time (keys equal
/// as `String`s but not as bytes included).
final class KVStoragePendingAccessTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// The key's `last_access_time` in the manifest.
    private func manifestAccessTime(_ storage: KVStorage, _ key: String) throws -> Int64? {
        storage.endReadSnapshot()
        let select = try storage.database.prepare("SELECT last_access_time FROM manifest WHERE key = ?1")
        defer { select.reset() }
        select.bind(key, at: 1)
        return try select.step() ? select.int64(0) : nil
    }

    func testASaveAfterAReadIsTheNewerAccess() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        try storage.save(key: "k", value: Data([1]))
        XCTAssertNotNil(try storage.itemValue(forKey: "k"))
        let read = try XCTUnwrap(storage.pendingAccessTimes[ExactKey("k")])
        // In place (an inline upsert), then into a file (a new row).
        for (value, filename) in [(Data([2]), nil), (testBytes(5_000, seed: 1), "k-file")] as [(Data, String?)] {
            try storage.save(key: "k", value: value, filename: filename)
            let saved = try XCTUnwrap(try manifestAccessTime(storage, "k"))
            XCTAssertGreaterThan(saved, read)
            XCTAssertEqual(try storage.itemInfo(forKey: "k")?.lastAccessTime.manifestTime, saved)
            XCTAssertEqual(try storage.item(forKey: "k")?.lastAccessTime.manifestTime, saved,
                           "the read before the save was reported as the last access")
        }
        let last = try XCTUnwrap(storage.pendingAccessTimes[ExactKey("k")])
        try storage.applyAccessTimes()
        XCTAssertEqual(try manifestAccessTime(storage, "k"), last)
        XCTAssertTrue(storage.pendingAccessTimes.isEmpty)
    }

    func testAReadReportsThePendingTimeOfTheReadBefore() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        defer { storage.close() }
        for (key, filename) in [("inline", nil), ("file", "f")] as [(String, String?)] {
            try storage.save(key: key, value: testBytes(3_000, seed: 2), filename: filename)
            let written = try XCTUnwrap(try manifestAccessTime(storage, key))
            XCTAssertEqual(try storage.item(forKey: key)?.lastAccessTime.manifestTime, written, key)
            let first = try XCTUnwrap(storage.pendingAccessTimes[ExactKey(key)])
            XCTAssertGreaterThan(first, written, key)
            XCTAssertEqual(try storage.itemInfo(forKey: key)?.lastAccessTime.manifestTime, first, key)
            XCTAssertEqual(try storage.item(forKey: key)?.lastAccessTime.manifestTime, first, key)
            XCTAssertGreaterThan(try XCTUnwrap(storage.pendingAccessTimes[ExactKey(key)]), first, key)
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
            reads.append(try XCTUnwrap(storage.pendingAccessTimes[ExactKey(key)]))
        }
        XCTAssertEqual(storage.pendingAccessTimes.count, keys.count)
        try storage.applyAccessTimes()
        XCTAssertEqual(try keys.map { try XCTUnwrap(try manifestAccessTime(storage, $0)) }, reads)
    }
}
