import Foundation
@testable import KVCache
import TestSupport
import XCTest

/// Review: schema-v2 `totals` (triggers + recursive_triggers), the access log and its fold, trims in steps and
/// batched removeAll, against a reference model, with keys that differ only after a NUL byte or only in
/// Unicode normalisation (distinct byte strings that Swift's `==` may call equal).
final class KVCacheTotalsReviewTests: XCTestCase {
    static let keys: [String] = [
        "a", "a\0", "a\0b", "a\0c", "\0", "\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}",
        "k1", "k2", "k3", "k4", "k5", "k6",
    ]

    func testTotalsMatchAReferenceModelUnderRandomOperationsWithOddKeys() throws {
        let seed = ProcessInfo.processInfo.environment["REVIEW_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kv-review-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 64)
        var model: [[UInt8]: Int] = [:]
        func bytes(_ key: String) -> [UInt8] { Array(key.utf8) }
        // What the cost limit counts (schema 3): the value (files in whole 4 KiB blocks), the key three times,
        // the row overhead.
        func modelCost() -> Int64 {
            model.reduce(0) { total, entry in
                total + KVStorage.cost(keyBytes: entry.key.count, valueBytes: Int64(entry.value), isFile: entry.value > 64,
                                       extendedDataBytes: 0)
            }
        }

        for step in 0..<1_500 {
            let disk = cache!
            let key = Self.keys[Int(rng.next() % UInt64(Self.keys.count))]
            let op = rng.next() % 100
            var what = ""
            switch op {
            case 0..<40:
                let size = 1 + Int(rng.next() % 150) // inline (<64) and file values
                what = "put \(key.debugDescription) \(size)"
                try disk.setObject(Data(repeating: UInt8(size & 0xFF), count: size), forKey: key)
                model[bytes(key)] = size
            case 40..<65:
                what = "get \(key.debugDescription)"
                let value = try disk.object(forKey: key)
                XCTAssertEqual(value?.count, model[bytes(key)], "seed \(seed) step \(step): \(what)")
            case 65..<80:
                what = "remove \(key.debugDescription)"
                try disk.removeObject(forKey: key)
                model[bytes(key)] = nil
            case 80..<87:
                let limit = Int(rng.next() % 8)
                what = "trim count \(limit)"
                try disk.trim(toCount: limit)
                for k in Self.keys where model[bytes(k)] != nil {
                    if try !disk.containsObject(forKey: k) { model[bytes(k)] = nil }
                }
                XCTAssertLessThanOrEqual(model.count, limit, "seed \(seed) step \(step): \(what)")
            case 87..<93:
                let limit = Int64(rng.next() % 12_000)
                what = "trim cost \(limit)"
                try disk.trim(toCost: limit)
                for k in Self.keys where model[bytes(k)] != nil {
                    if try !disk.containsObject(forKey: k) { model[bytes(k)] = nil }
                }
                XCTAssertLessThanOrEqual(modelCost(), limit, "seed \(seed) step \(step): \(what)")
            case 93..<97:
                what = "removeAll"
                try disk.removeAllObjects()
                model.removeAll()
            default:
                what = "reopen"
                cache = nil
                cache = try DiskCache(path: directory.path, inlineThreshold: 64)
            }
            let now = cache!
            let count = try now.totalCount()
            let cost = try now.totalCost()
            if count != model.count || cost != modelCost() {
                XCTFail("seed \(seed) step \(step) after \(what): totals \(count)/\(cost), model \(model.count)/\(modelCost())")
                return
            }
        }
        // Every surviving key reads back its own value (no NUL-truncated or normalisation-merged key).
        for key in Self.keys {
            XCTAssertEqual(try cache!.object(forKey: key)?.count, model[bytes(key)], "seed \(seed): \(key.debugDescription)")
        }
        let usage = try cache!.usage()
        XCTAssertEqual(usage.entryCount, model.count, "seed \(seed)")
        XCTAssertEqual(usage.totalBytes, Int64(model.values.reduce(0, +)), "seed \(seed)")
    }
}
