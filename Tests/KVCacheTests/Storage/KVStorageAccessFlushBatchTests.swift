@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// A flush limited to a batch (`flushAccessTimes(atMost:)`, one per read after a deferral) appends exactly that
/// many pending access times, each with its own time, and keeps every other one pending: the split loses,
/// duplicates or mixes up none of them, keys equal up to a NUL or up to Unicode normalisation included.
final class KVStorageAccessFlushBatchTests: XCTestCase {
    func testABatchedFlushAppendsExactlyTheBatchAndKeepsTheRestPending() throws {
        let directory = try TemporaryDirectory("kvcache-access-flush-batch")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        var keys = (0..<3_000).map { "key-\($0)" }
        keys += ["a\u{0}x", "a\u{0}y", "\u{e9}", "e\u{301}", "", "\u{10FFFF}\u{0}"]
        let expected = Dictionary(uniqueKeysWithValues: keys.enumerated().map { (ExactKey($0.element), Int64(1_000 + $0.offset)) })
        let (appended, left) = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> ([ExactKey<String>: Int64], [ExactKey<String>: Int64]) in
            storage.flushAccessTimes()
            while try storage.foldAccessLogBatch() {}
            storage.pendingAccessTimes = expected
            storage.flushAccessTimes(atMost: KVStorage.pendingAccessLimit)
            return (try Self.logged(storage), storage.pendingAccessTimes)
        }
        XCTAssertEqual(appended.count, KVStorage.pendingAccessLimit)
        XCTAssertEqual(left.count, keys.count - KVStorage.pendingAccessLimit)
        XCTAssertTrue(Set(appended.keys).isDisjoint(with: left.keys), "a key both appended and still pending")
        XCTAssertEqual(appended.merging(left) { first, _ in first }, expected, "a time lost or changed by the split")

        // The rest go out with the next flushes, a batch each.
        let all = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> [ExactKey<String>: Int64] in
            while !storage.pendingAccessTimes.isEmpty { storage.flushAccessTimes(atMost: KVStorage.pendingAccessLimit) }
            return try Self.logged(storage)
        }
        XCTAssertEqual(all, expected)
    }

    /// The log's rows as key → time (each key once in this test).
    private static func logged(_ storage: KVStorage) throws -> [ExactKey<String>: Int64] {
        storage.endReadSnapshot()
        let select = try storage.database.prepare("SELECT key, time FROM access_log")
        defer { select.reset() }
        var rows: [ExactKey<String>: Int64] = [:]
        while try select.step() {
            let key = ExactKey(select.text(0) ?? "")
            XCTAssertNil(rows[key], "\(key.base.debugDescription) logged twice")
            rows[key] = select.int64(1)
        }
        return rows
    }
}
