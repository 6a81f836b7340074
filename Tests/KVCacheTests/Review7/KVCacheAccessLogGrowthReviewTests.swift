@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review 7: `KVStorage+AccessTime.swift` promises that "a store nobody trims keeps a log at most about as
/// long as it has entries" (the cap: the larger of 65,536 rows and the entry count). Since the folds moved to
/// `DiskCache`'s background queue (one 256-row batch per task, dba3143 / 03bad7c) while a flush appends up to
/// 1,024 rows, a steady stream of reads may outgrow the folds. This test reads 1,100 keys round and round
/// from two threads for a bounded number of reads and samples `access_log`'s length: it must stay within
/// cap + 4 flushes (4 × 1,024 rows) of slack.
final class KVCacheAccessLogGrowthReviewTests: XCTestCase {
    func testAStreamOfReadsKeepsTheAccessLogNearItsCap() throws {
        let directory = try TemporaryDirectory("kvcache-log-growth")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 1_100
        let cap = try cache.review7Fill(keys: keys, rows: 65536)
        let readsPerThread = 150_000
        let longest = Atomic<Int64>(0)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for n in 0..<readsPerThread {
                let i = (n + worker * 550) % keys
                if (try? cache.object(forKey: "key-\(i)")) == nil { failures.add(1, ordering: .relaxed) }
                // Each reader samples the log's length now and then (one lock hold, two B-tree probes).
                if n % 2_048 == worker * 1_024 {
                    let length = (try? cache.review7LogLength()) ?? 0
                    longest.max(length, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        let slack = 4 * Int64(KVStorage.pendingAccessLimit)
        XCTAssertLessThanOrEqual(longest.load(ordering: .relaxed), cap + slack,
                                 "access_log grew to \(longest.load(ordering: .relaxed)) rows (cap \(cap)) during a stream of reads")
    }
}
