@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67), attack on "a fold stops once `stepDuration` has passed (after at least
/// one row)": the bound on how long a fold holds the store lock, whatever the rows.
final class KVCacheFoldTimeBoundReviewTests: XCTestCase {
    /// Seconds `body` took.
    private func timed(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// 256 keys of 100 KB that differ only in their last bytes (long keys sharing a prefix, as generated URLs
    /// do). The fold reads its whole batch and groups it in a `[Data: Int64]` before it looks at the clock;
    /// `Data` hashes only its first 80 bytes, so every key of the batch lands in one hash chain and the grouping
    /// compares each key with all those before it: 32,640 comparisons of 100 KB, about a second under the lock
    /// for a fold meant to take 5 ms.
    func testAFoldOfLongKeysSharingAPrefixStaysNearItsStep() throws {
        let directory = try TemporaryDirectory("kvcache-fold-time-long-keys")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let prefix = String(repeating: "p", count: 100_000 - 8)
        let keys = (0..<Int(KVStorage.accessFoldBatch)).map { prefix + String(format: "%08d", $0) }
        for (i, key) in keys.enumerated() { try storage.save(key: key, value: testBytes(16, seed: i)) }
        try storage.applyAccessTimes()
        for key in keys { XCTAssertNotNil(try storage.item(forKey: key)) }
        storage.flushAccessTimes()
        let logged = try storage.reviewFoldLog()
        XCTAssertEqual(logged.count, keys.count)
        // What made the grouping quadratic: keys that differ only past their 80th byte must not share a hash.
        // (No timed assertion here: the house measures time in `make bench`; the cause is what this pins down.)
        let hashes = Set(keys.map { LogKey(isBlob: false, bytes: Data($0.utf8)).hashValue })
        XCTAssertGreaterThan(hashes.count, keys.count - 4, "long keys sharing a prefix share a hash")
        // Out of time, a fold of them still takes one row at a time, and the first row always.
        storage.stepDuration = 0
        XCTAssertTrue(try storage.foldAccessLogBatch())
        XCTAssertEqual(try storage.accessLogLength(), Int64(keys.count - 1))
        // And the rest fold exactly: each key its own read's time (the log is in the flush's order, not the keys').
        storage.stepDuration = .infinity
        _ = try storage.reviewFoldAll()
        let times = Dictionary(uniqueKeysWithValues: logged.map { ($0.key, $0.time) })
        for key in keys {
            XCTAssertEqual(try storage.reviewFoldManifestTime(key), times[Data(key.utf8)], String(key.suffix(8)))
        }
    }

    /// Rows whose rewrite is slow (64 KB inline values, one overflow chain each): a fold whose step has run
    /// out stops after its first row.
    func testAFoldOfSlowRowsStopsAfterItsStep() throws {
        let directory = try TemporaryDirectory("kvcache-fold-time-slow-rows")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let count = Int(KVStorage.accessFoldBatch)
        for i in 0..<count { try storage.save(key: "key-\(i)", value: testBytes(64 * 1024, seed: i)) }
        try storage.applyAccessTimes()
        for i in 0..<count { XCTAssertNotNil(try storage.item(forKey: "key-\(i)")) }
        storage.flushAccessTimes()
        XCTAssertEqual(try storage.accessLogLength(), Int64(count))
        storage.stepDuration = 1e-6
        var worst = 0.0
        var folds = 0
        while true {
            var more = false
            worst = max(worst, try timed { more = try storage.foldAccessLogBatch() })
            if !more { break }
            folds += 1
            XCTAssertLessThan(folds, 10_000)
        }
        XCTAssertEqual(try storage.accessLogLength(), 0)
        // A step that has run out (1 µs: less than one row takes) stops after its first row, however slow.
        XCTAssertEqual(folds, count, "a fold went on past its step (\(worst) s for the slowest)")
    }

    /// `stepDuration` too large for nanoseconds in a `UInt64` (1e11 s, or `greatestFiniteMagnitude`): the
    /// deadline is `UInt64(duration * 1e9)`, a conversion that traps past `UInt64.max`. A fold (and a trim step)
    /// with such a step must behave as with `infinity`: the whole batch.
    func testAHugeFiniteStepDurationFoldsAWholeBatch() throws {
        for duration in [1e11, Double.greatestFiniteMagnitude] {
            let directory = try TemporaryDirectory("kvcache-fold-time-huge-step")
            defer { try? directory.remove() }
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            defer { storage.close() }
            for i in 0..<300 { try storage.save(key: "key-\(i)", value: testBytes(16, seed: i)) }
            try storage.applyAccessTimes()
            for i in 0..<300 { XCTAssertNotNil(try storage.item(forKey: "key-\(i)")) }
            storage.flushAccessTimes()
            storage.stepDuration = duration
            XCTAssertTrue(try storage.foldAccessLogBatch())
            XCTAssertEqual(try storage.accessLogLength(), 300 - KVStorage.accessFoldBatch, "duration \(duration)")
            var limits = TrimLimits(maxCount: 100)
            while try storage.trimStep(&limits) {}
            XCTAssertEqual(try storage.itemsCount(), 100, "duration \(duration)")
        }
    }
}

extension KVCacheFoldTimeBoundReviewTests {
    /// A negative step is "no time left": one row per fold, whether it is -1 or -infinity (which, not being
    /// finite, counted as "no bound" and folded whole batches while -1 folds one row).
    func testANegativeStepFoldsOneRowEvenMinusInfinity() throws {
        for duration in [-1, -Double.infinity] {
            let directory = try TemporaryDirectory("kvcache-fold-time-negative-step")
            defer { try? directory.remove() }
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            defer { storage.close() }
            for i in 0..<10 { try storage.save(key: "key-\(i)", value: testBytes(16, seed: i)) }
            try storage.applyAccessTimes()
            for i in 0..<10 { XCTAssertNotNil(try storage.item(forKey: "key-\(i)")) }
            storage.flushAccessTimes()
            storage.stepDuration = duration
            XCTAssertTrue(try storage.foldAccessLogBatch())
            XCTAssertEqual(try storage.accessLogLength(), 9, "duration \(duration)")
        }
    }
}
