@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// Review (fold step duration, 5e2ba67): seeded random schedules on one `KVStorage` of reads, saves, removals,
/// flushes (whole or partial), folds (through the end or through a random rowid, with a random
/// `stepDuration`: 0, negative, NaN, infinite, tiny, the default) and trims (`removeItems(toFitCount:)` or
/// `trimStep` loops with a random step), against a model of each key's last use: after each trim exactly the
/// most recently used entries are left. Keys include empty, NUL, NFC/NFD and 20 KB ones.
/// `KVCACHE_FOLD_MODEL_SEED` replays one seed; `KVCACHE_FOLD_MODEL_SEEDS` / `_STEPS` change the run's size.
final class KVCacheFoldModelReviewTests: XCTestCase {
    func testTrimsRemoveTheLeastRecentlyUsedWhateverTheFolds() throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let seed = environment["KVCACHE_FOLD_MODEL_SEED"].flatMap(UInt64.init) {
            seeds = [seed]
        } else {
            let count = environment["KVCACHE_FOLD_MODEL_SEEDS"].flatMap(Int.init) ?? 4
            seeds = (0..<UInt64(count)).map { 5_000 &+ $0 }
        }
        let steps = environment["KVCACHE_FOLD_MODEL_STEPS"].flatMap(Int.init) ?? 6_000
        for seed in seeds {
            let failuresBefore = testRun?.failureCount ?? 0
            try runSchedule(seed: seed, steps: steps)
            if (testRun?.failureCount ?? 0) > failuresBefore {
                print("KVCacheFoldModelReviewTests: seed \(seed) failed (KVCACHE_FOLD_MODEL_SEED=\(seed) replays it)")
                return
            }
        }
    }

    private static let durations: [Double] = [0, -1, .nan, .infinity, 1e-5, 1e-4, KVStorage.defaultStepDuration]

    private func runSchedule(seed: UInt64, steps: Int) throws {
        let directory = try TemporaryDirectory("kvcache-fold-model")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        var rng = SplitMix64(seed: seed)
        var keys = (0..<240).map { "k\($0)" }
        keys += ["", "\u{0}", "a\u{0}", "a\u{0}b", "\u{e9}", "e\u{301}", "\u{1f600}", "\u{10fffd}"]
        keys += (0..<8).map { String(repeating: "L", count: 20_000) + "\($0)" }
        // Key index → last use tick (by index: `String` equality is canonical equivalence, "\u{e9}" == "e\u{301}").
        var present: [Int: Int] = [:]
        var tick = 0
        var trims = 0

        func expectSurvivors(_ context: String) throws {
            storage.endReadSnapshot()
            let select = try storage.database.prepare("SELECT key FROM manifest")
            defer { select.reset() }
            var stored = Set<Data>()
            while try select.step() { stored.insert(select.data(0) ?? Data()) }
            let expected = Set(present.keys.map { Data(keys[$0].utf8) })
            let index = Dictionary(keys.enumerated().map { (Data($0.element.utf8), $0.offset) }, uniquingKeysWith: { a, _ in a })
            for key in stored.subtracting(expected).prefix(5) {
                let name = String(decoding: key, as: UTF8.self)
                XCTFail("seed \(seed), \(context): \(name.prefix(30).debugDescription) kept, last use \(index[key].flatMap { present[$0] } ?? -1) of \(tick)")
            }
            for key in expected.subtracting(stored).prefix(5) {
                let name = String(decoding: key, as: UTF8.self)
                XCTFail("seed \(seed), \(context): \(name.prefix(30).debugDescription) removed, last use \(index[key].flatMap { present[$0] } ?? -1) of \(tick)")
            }
        }

        for step in 0..<steps {
            let dice = rng.next(upTo: 1_000)
            // Half the operations on a working set of 24 keys: reads, saves and removals of one key meet in
            // the log (a read logged before the key was saved again, several reads in one batch).
            let keyIndex = rng.next(upTo: 2) == 0 ? rng.next(upTo: 24) : rng.next(upTo: keys.count)
            let key = keys[keyIndex]
            if dice < 520 {
                let item = try storage.item(forKey: key)
                XCTAssertEqual(item != nil, present[keyIndex] != nil, "seed \(seed), step \(step): read \(key.prefix(30).debugDescription)")
                if item != nil { tick += 1; present[keyIndex] = tick }
            } else if dice < 690 {
                try storage.save(key: key, value: testBytes(1 + rng.next(upTo: 64), seed: step))
                tick += 1
                present[keyIndex] = tick
            } else if dice < 720 {
                try storage.removeItem(forKey: key)
                present[keyIndex] = nil
            } else if dice < 860 {
                storage.flushAccessTimes(atMost: rng.next(upTo: 2) == 0 ? .max : 1 + rng.next(upTo: 20))
            } else if dice < 930 {
                storage.stepDuration = Self.durations[rng.next(upTo: Self.durations.count)]
                let end = try storage.accessLogEnd()
                let through = rng.next(upTo: 2) == 0 ? Int64.max : end - Int64(rng.next(upTo: 40))
                for _ in 0..<(1 + rng.next(upTo: 3)) { _ = try storage.foldAccessLogBatch(through: through) }
            } else {
                let count = present.count
                guard count > 2 else { continue }
                // Half the time a few entries (the order at the old end must be exact), else down to anywhere.
                let target = rng.next(upTo: 2) == 0 ? 1 + rng.next(upTo: count - 1) : max(1, count - 1 - rng.next(upTo: 6))
                storage.stepDuration = Self.durations[rng.next(upTo: Self.durations.count)]
                if rng.next(upTo: 2) == 0 {
                    try storage.removeItems(toFitCount: target)
                } else {
                    var limits = TrimLimits(maxCount: target)
                    var stepsTaken = 0
                    while try storage.trimStep(&limits) {
                        stepsTaken += 1
                        if stepsTaken > 100_000 { XCTFail("seed \(seed), step \(step): the trim never ends"); return }
                    }
                }
                let survivors = present.sorted { $0.value > $1.value }.prefix(target)
                present = Dictionary(uniqueKeysWithValues: survivors.map { ($0.key, $0.value) })
                trims += 1
                try expectSurvivors("step \(step), trim \(trims) to \(target)")
            }
        }
        try storage.removeItems(toFitCount: present.count / 3)
        present = Dictionary(uniqueKeysWithValues: present.sorted { $0.value > $1.value }.prefix(present.count / 3).map { ($0.key, $0.value) })
        try expectSurvivors("final trim")
        XCTAssertGreaterThan(trims, 0)
    }
}
