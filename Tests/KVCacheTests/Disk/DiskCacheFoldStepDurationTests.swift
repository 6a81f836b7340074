@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// A fold of the access log stops once `KVStorage.stepDuration` has passed (after at least one row), like a
/// trim step: with a fixed 256 rows, each rewriting its key's manifest row, a fold held the store lock 14–20 ms
/// at 100k entries on a slow 2-core machine, the longest holds left during a trim in `make bench`. Cut short
/// or not, a fold keeps "the newest time per key wins".
final class DiskCacheFoldStepDurationTests: XCTestCase {
    /// A cache of `count` keys whose access log holds `reads` reads (each key of `keys`, in order), folded into
    /// nothing yet.
    private func cacheWithLoggedReads(
        _ directory: TemporaryDirectory, count: Int, reads keys: [Int]
    ) throws -> DiskCache {
        let cache = try DiskCache(path: directory.path)
        for index in 0..<count { try cache.setObject(testBytes(64, seed: index), forKey: "key-\(index)") }
        // The background queue would fold on its own; the log is under its cap, so nothing is owed anyway.
        try cache.core.storage.withLock { storage in
            storage.flushAccessTimes()
            while try storage.foldAccessLogBatch() {}
        }
        for index in keys {
            XCTAssertEqual(try cache.object(forKey: "key-\(index)"), testBytes(64, seed: index))
            // One log row per read: each read's time goes out before the next read of the same key.
            cache.core.storage.withLock { $0.flushAccessTimes() }
        }
        return cache
    }

    private func logLength(_ cache: DiskCache) throws -> Int64 {
        try cache.core.storage.withLock { storage in try storage.accessLogLength() }
    }

    func testAFoldOutOfTimeFoldsOneRow() throws {
        let directory = try TemporaryDirectory("kvcache-fold-step-duration")
        defer { try? directory.remove() }
        let cache = try cacheWithLoggedReads(directory, count: 20, reads: Array(0..<20))
        XCTAssertEqual(try logLength(cache), 20)
        cache.core.storage.withLock { $0.stepDuration = 0 }
        var lengths: [Int64] = []
        while try cache.core.storage.withLock({ storage in try storage.foldAccessLogBatch() }) {
            lengths.append(try logLength(cache))
        }
        XCTAssertEqual(lengths, Array((0..<20).reversed()).map(Int64.init), "a fold went on past its time")
    }

    func testWithTimeLeftAFoldTakesAWholeBatch() throws {
        let directory = try TemporaryDirectory("kvcache-fold-step-duration-batch")
        defer { try? directory.remove() }
        let reads = Int(KVStorage.accessFoldBatch) + 50
        let cache = try cacheWithLoggedReads(directory, count: reads, reads: Array(0..<reads))
        cache.core.storage.withLock { $0.stepDuration = .infinity }
        XCTAssertTrue(try cache.core.storage.withLock { storage in try storage.foldAccessLogBatch() })
        XCTAssertEqual(try logLength(cache), 50)
    }

    /// A key read several times in one batch gets its newest time, whether the fold that reaches its first
    /// row is cut short right after it or not; the order a trim then removes in follows those times.
    func testTheNewestTimeWinsWhenAFoldIsCutShort() throws {
        for duration in [0, Double.infinity] {
            let directory = try TemporaryDirectory("kvcache-fold-step-duration-newest")
            defer { try? directory.remove() }
            // key-0 read first and again last; key-1…key-4 in between; key-5…key-9 never.
            let cache = try cacheWithLoggedReads(directory, count: 10, reads: [0, 1, 2, 3, 4, 0])
            let newest = try cache.core.storage.withLock { storage in
                try storage.database.textRows("SELECT max(time) FROM access_log WHERE key = 'key-0'")
            }
            cache.core.storage.withLock { $0.stepDuration = duration }
            try cache.core.storage.withLock { storage in while try storage.foldAccessLogBatch() {} }
            XCTAssertEqual(try logLength(cache), 0)
            let folded = try cache.core.storage.withLock { storage in
                try storage.database.textRows("SELECT last_access_time FROM manifest WHERE key = 'key-0'")
            }
            XCTAssertEqual(folded, newest, "duration \(duration): key-0 kept an older time")
            // key-1 is now the least recently used of the keys read: it goes right after the 5 never read.
            try cache.trim(toCount: 4)
            XCTAssertNil(try cache.object(forKey: "key-1"), "duration \(duration)")
            for index in [0, 2, 3, 4] {
                XCTAssertNotNil(try cache.object(forKey: "key-\(index)"), "duration \(duration): key-\(index)")
            }
        }
    }

    /// Keys that differ only after a NUL, or only in their Unicode normalisation, are folded as the distinct
    /// keys they are: each gets its own newest time, never the other's.
    func testKeysEqualUpToANULOrNormalisationAreFoldedApart() throws {
        let directory = try TemporaryDirectory("kvcache-fold-step-duration-keys")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = ["a\u{0}x", "a\u{0}y", "\u{e9}", "e\u{301}", "", "\u{10FFFF}"]
        for (index, key) in keys.enumerated() { try cache.setObject(testBytes(32, seed: index), forKey: key) }
        try cache.core.storage.withLock { storage in
            storage.flushAccessTimes()
            while try storage.foldAccessLogBatch() {}
        }
        // Read every other key, then fold one row at a time.
        for key in keys.enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
            XCTAssertNotNil(try cache.object(forKey: key))
            cache.core.storage.withLock { $0.flushAccessTimes() }
        }
        cache.core.storage.withLock { $0.stepDuration = 0 }
        try cache.core.storage.withLock { storage in while try storage.foldAccessLogBatch() {} }
        // The three keys not read are the three least recently used.
        try cache.trim(toCount: 3)
        for (index, key) in keys.enumerated() {
            XCTAssertEqual(try cache.containsObject(forKey: key), index % 2 == 1, "key \(index)")
        }
    }
}
