@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review 7: since dba3143 / 03bad7c a `DiskCache` read no longer folds the access log it appends to (the
/// background queue does), and the background folds are refused while a trim runs (`scheduleLogFolds`,
/// `foldOwedBatch`: `trimsRunning > 0`). The trim folds the log only up to where it ended when the trim
/// began (`TrimLimits.foldThrough`). So while one trim runs — a long one, e.g. a 10 % trim of a 1M-entry
/// store — every read's access time is appended and nothing folds: `access_log` grows with the reads, not
/// bounded by its cap (before, a read folded up to 4 × 256 rows per 1,024 appended and the log stayed at
/// its cap whatever ran). A trim is held between two steps (its step hook, outside the store lock, as a
/// long trim is between steps) while 100 flushes of reads run.
final class KVCacheAccessLogDuringTrimReviewTests: XCTestCase {
    func testTheAccessLogStaysNearItsCapWhileATrimRuns() throws {
        let directory = try TemporaryDirectory("kvcache-log-trim")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 1_100
        let cap = try cache.review7Fill(keys: keys, rows: 65536)
        let reads = 100 * KVStorage.pendingAccessLimit
        let readsDone = DispatchSemaphore(value: 0)
        let trimHeld = expectation(description: "the trim reached its first step")
        let held = Atomic(false)
        cache.core.trimStepHook.withLock { hook in
            hook = { _ in
                guard held.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
                else { return }
                trimHeld.fulfill()
                // Bounded: a failing reader thread must not hang the test.
                _ = readsDone.wait(timeout: .now() + 15)
            }
        }
        let trimmed = expectation(description: "the trim ended")
        DispatchQueue.global().async {
            do { try cache.trim(toCount: keys - 10) } catch { XCTFail("trim: \(error)") }
            trimmed.fulfill()
        }
        wait(for: [trimHeld], timeout: 10)
        var longest: Int64 = 0
        for n in 0..<reads {
            XCTAssertNotNil(try cache.object(forKey: "key-\(n % keys)"))
            if n % 1_024 == 0 {
                longest = max(longest, try cache.review7LogLength())
            }
        }
        longest = max(longest, try cache.review7LogLength())
        readsDone.signal()
        wait(for: [trimmed], timeout: 15)
        let slack = 4 * Int64(KVStorage.pendingAccessLimit)
        XCTAssertLessThanOrEqual(longest, cap + slack,
                                 "access_log grew to \(longest) rows (cap \(cap)) while a trim ran")
    }
}
