@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (attack): access times travel through three tiers (pending in memory, `access_log`, the
/// manifest) and their flushes are deferred, batched and resumed by several flags (`checkpointDefersAccessFlush`
/// of the background checkpoint, the trim's own, a long WAL, `pendingAccessLimit` batches of 1,024 keys and the
/// `pendingAccessHardLimit` of 4,096), with folds owed to a background queue. Whatever they do, the order a trim
/// removes by must be the order of the accesses. Seeded random schedules on one `DiskCache` (inline and file
/// values, 6,000 keys, so batches and the hard limit are reached) of reads, writes, removals, toggles of the
/// background checkpoint's deferral (as its queue sets and clears it), and trims to a count or a cost, against
/// a model of the last access of each key: after each trim exactly the most recently used entries are left
/// (a cost trim: the model removes least recently used ones until the total fits), every value reads back as
/// written, and no access time was dropped (`accessTimesDropped`, only allowed while `access_log` is past its
/// cap). `KVCACHE_LRU_MODEL_SEED` replays a seed, `KVCACHE_LRU_MODEL_SEEDS` / `_STEPS` change the run's size.
final class KVCacheLRUModelReviewTests: XCTestCase {
    func testTrimsRemoveExactlyTheLeastRecentlyUsedWhateverTheDeferrals() throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let seed = environment["KVCACHE_LRU_MODEL_SEED"].flatMap(UInt64.init) {
            seeds = [seed]
        } else {
            let count = environment["KVCACHE_LRU_MODEL_SEEDS"].flatMap(Int.init) ?? 2
            seeds = (0..<UInt64(count)).map { 1_127 &+ $0 }
        }
        let steps = environment["KVCACHE_LRU_MODEL_STEPS"].flatMap(Int.init) ?? 12_000
        for seed in seeds {
            let failuresBefore = testRun?.failureCount ?? 0
            try runSchedule(seed: seed, steps: steps)
            if (testRun?.failureCount ?? 0) > failuresBefore {
                print("KVCacheLRUModelReviewTests: seed \(seed) failed (KVCACHE_LRU_MODEL_SEED=\(seed) replays it)")
                return
            }
        }
    }

    private func runSchedule(seed: UInt64, steps: Int) throws {
        let directory = try TemporaryDirectory("kvcache-lru-model")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        cache.autoTrimInterval = 3_600
        var rng = SplitMix64(seed: seed)
        let keyCount = 6_000
        var values: [String: Data] = [:]
        var lastUse: [String: Int] = [:]
        var tick = 0, trims = 0

        /// The manifest's keys, read directly (not an access; pending times and flags untouched).
        func expectSurvivors(_ context: String) throws {
            let stored = try cache.core.storage.withLock { (storage: inout KVStorage) throws -> Set<String> in
                storage.endReadSnapshot()
                let select = try storage.database.prepare("SELECT key FROM manifest")
                defer { select.reset() }
                var keys = Set<String>()
                while try select.step() { if let key = select.text(0) { keys.insert(key) } }
                return keys
            }
            let expected = Set(values.keys)
            for key in stored.subtracting(expected).sorted().prefix(5) {
                XCTFail("seed \(seed), \(context): \(key) kept, last use \(lastUse[key] ?? -1) of \(tick)")
            }
            for key in expected.subtracting(stored).sorted().prefix(5) {
                XCTFail("seed \(seed), \(context): \(key) removed, last use \(lastUse[key] ?? -1) of \(tick)")
            }
        }

        for step in 0..<steps {
            let dice = rng.next(upTo: 1_000)
            if dice < 560 {
                // Reads favour a working set, so keys are read again while pending.
                let index = rng.next(upTo: 3) == 0 ? rng.next(upTo: keyCount) : rng.next(upTo: keyCount / 4)
                let key = "k\(index)"
                let value = try cache.object(forKey: key)
                XCTAssertEqual(value, values[key], "seed \(seed), step \(step): \(key)")
                if value != nil {
                    tick += 1
                    lastUse[key] = tick
                }
            } else if dice < 900 {
                let key = "k\(rng.next(upTo: keyCount))"
                let value = testBytes(rng.next(upTo: 2) == 0 ? 200 : 1_500 + rng.next(upTo: 500), seed: step)
                try cache.setObject(value, forKey: key)
                values[key] = value
                tick += 1
                lastUse[key] = tick
            } else if dice < 930 {
                let key = "k\(rng.next(upTo: keyCount))"
                try cache.removeObject(forKey: key)
                values[key] = nil
                lastUse[key] = nil
            } else if dice < 985 {
                let deferring = rng.next(upTo: 2) == 0
                cache.core.storage.withLock { $0.checkpointDefersAccessFlush = deferring }
            } else {
                // Most recently used first; ticks are unique.
                let byUse = values.keys.sorted { lastUse[$0, default: 0] > lastUse[$1, default: 0] }
                trims += 1
                if rng.next(upTo: 2) == 0 {
                    let keep = max(0, values.count - 1 - rng.next(upTo: 200))
                    try cache.trim(toCount: keep)
                    for key in byUse.dropFirst(keep) { values[key] = nil }
                    try expectSurvivors("step \(step), trim to count \(keep)")
                    for key in byUse.dropFirst(keep) { lastUse[key] = nil }
                } else {
                    // What the cost limit counts (schema 3): value (files in 4 KiB blocks), key ×3, row overhead.
                    func entryCost(_ key: String) -> Int64 {
                        let size = values[key]!.count
                        return KVStorage.cost(keyBytes: key.utf8.count, valueBytes: Int64(size), isFile: size > 1_000,
                                              extendedDataBytes: 0)
                    }
                    let total = values.keys.reduce(0) { $0 + entryCost($1) }
                    XCTAssertEqual(try cache.totalCost(), total, "seed \(seed), step \(step)")
                    let cost = max(0, total - 1 - Int64(rng.next(upTo: 200_000)))
                    try cache.trim(toCost: cost)
                    var left = total
                    for key in byUse.reversed() where left > cost {
                        left -= entryCost(key)
                        values[key] = nil
                    }
                    try expectSurvivors("step \(step), trim to cost \(cost)")
                    for key in lastUse.keys where values[key] == nil { lastUse[key] = nil }
                }
                XCTAssertEqual(try cache.totalCount(), values.count, "seed \(seed), step \(step)")
            }
            if (testRun?.failureCount ?? 0) > 0 { return }
        }
        XCTAssertGreaterThan(trims, 3)
        XCTAssertEqual(cache.core.storage.withLock { $0.accessTimesDropped }, 0, "seed \(seed): access times dropped")
        XCTAssertGreaterThan(cache.core.storage.withLock { $0.accessLogAppends }, 1, "seed \(seed): no batch of access times")
        for (key, value) in values { XCTAssertEqual(try cache.object(forKey: key), value, "seed \(seed): \(key)") }
    }
}
