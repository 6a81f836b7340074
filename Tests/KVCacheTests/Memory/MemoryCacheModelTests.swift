@testable import KVCache
import TestSupport
import XCTest

/// A deliberately different reference LRU: recency is a stamp per key, eviction scans for the oldest.
private struct ReferenceLRU {
    struct Entry { var value: Int; var cost: Int; var stamp: Int; var time: Double }
    var entries: [Int: Entry] = [:]
    var stamp = 0
    var totalCost = 0
    var countLimit = Int.max
    var costLimit = Int.max

    mutating func get(_ key: Int, now: Double) -> Int? {
        guard var entry = entries[key] else { return nil }
        stamp += 1
        entry.stamp = stamp
        entry.time = now
        entries[key] = entry
        return entry.value
    }

    mutating func set(_ key: Int, value: Int, cost: Int, now: Double) {
        stamp += 1
        totalCost += cost - (entries[key]?.cost ?? 0)
        entries[key] = Entry(value: value, cost: cost, stamp: stamp, time: now)
        evict { $0.entries.count > $0.countLimit || $0.totalCost > $0.costLimit }
    }

    mutating func remove(_ key: Int) {
        if let entry = entries.removeValue(forKey: key) { totalCost -= entry.cost }
    }

    /// Evicts the oldest entry while `condition` holds.
    mutating func evict(while condition: (ReferenceLRU) -> Bool) {
        while condition(self), let oldest = entries.min(by: { $0.value.stamp < $1.value.stamp }) {
            remove(oldest.key)
        }
    }

    var orderedKeys: [Int] { entries.sorted { $0.value.stamp > $1.value.stamp }.map(\.key) }
}

final class MemoryCacheModelTests: XCTestCase {
    /// The keys: odd ones (empty, NUL inside and at the end, every plane, canonically-equal pairs that
    /// differ as bytes; see `OddKeyTests`, without the 100 KB ones, which would only slow hashing down) and
    /// plain ones. The reference knows them by index, so it keeps every pair apart.
    static let keys: [String] = {
        let odd = OddKeyTests.oddKeys.filter { $0.utf8.count < 1_000 }
        return odd + (odd.count..<96).map { "k\($0)" }
    }()

    /// 1,000,000 random operations with random limits: the cache and the reference agree on every result,
    /// on totals after every operation, and on the full LRU order (hence eviction order) every 997 ops.
    func testMillionRandomOperationsMatchReferenceLRU() {
        let seed = ProcessInfo.processInfo.environment["KVCACHE_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x5EED_CAFE
        var rng = SplitMix64(seed: seed)
        let clock = FakeClock()
        let cache = MemoryCache<String, Int>(name: "model", clock: { clock.now })
        let keys = Self.keys
        let order = { (indices: [Int]) in indices.map { Array(keys[$0].utf8) } }
        cache.releasesAsynchronously = false
        cache.autoTrimInterval = 1e9
        var model = ReferenceLRU()
        let keySpace = keys.count
        var mismatches = 0

        for op in 0..<1_000_000 {
            if op % 50_000 == 0 {
                let count = rng.next(upTo: 3) == 0 ? Int.max : 1 + rng.next(upTo: keySpace)
                let cost = rng.next(upTo: 3) == 0 ? Int.max : 1 + rng.next(upTo: 2_000)
                cache.countLimit = count
                cache.costLimit = cost
                model.countLimit = count
                model.costLimit = cost
            }
            let index = rng.next(upTo: keySpace), key = keys[index]
            let now = clock.now
            switch rng.next(upTo: 100) {
            case 0..<40:
                if cache.object(forKey: key) != model.get(index, now: now) { mismatches += 1 }
            case 40..<80:
                let cost = rng.next(upTo: 60)
                cache.setObject(op, forKey: key, cost: cost)
                model.set(index, value: op, cost: cost, now: now)
            case 80..<88:
                cache.removeObject(forKey: key)
                model.remove(index)
            case 88..<95:
                if cache.containsObject(forKey: key) != (model.entries[index] != nil) { mismatches += 1 }
            case 95..<97:
                clock.advance(by: Double(rng.next(upTo: 5)))
            case 97:
                let age = Double(1 + rng.next(upTo: 20))
                cache.trim(toAge: age)
                model.evict { lru in lru.entries.values.contains { now - $0.time > age } }
            case 98:
                let count = 1 + rng.next(upTo: keySpace)
                cache.trim(toCount: count)
                model.evict { $0.entries.count > count }
            default:
                if rng.next(upTo: 50) == 0 {
                    cache.removeAllObjects()
                    model.evict { !$0.entries.isEmpty }
                } else {
                    let cost = 1 + rng.next(upTo: 1_500)
                    cache.trim(toCost: cost)
                    model.evict { $0.totalCost > cost }
                }
            }
            if cache.totalCount != model.entries.count || cache.totalCost != model.totalCost { mismatches += 1 }
            if op % 997 == 0 {
                if cache._keysInLRUOrder().map({ Array($0.utf8) }) != order(model.orderedKeys) { mismatches += 1 }
                if let violation = cache._checkInvariants() { XCTFail(violation); return }
            }
            if mismatches > 0 { XCTFail("cache and reference diverged at operation \(op) (seed \(seed))"); return }
        }
        XCTAssertEqual(cache._keysInLRUOrder().map { Array($0.utf8) }, order(model.orderedKeys))
    }
}

