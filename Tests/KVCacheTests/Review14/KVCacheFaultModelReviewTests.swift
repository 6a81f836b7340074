@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (attack): seeded random schedules against a reference model, with a transient fault planned
/// before most operations (through the fault seam: the k-th write, read, fsync, directory sync, rename or
/// SQLite step fails with ENOSPC, EIO, EMFILE, or FULL, IOERR, BUSY, LOCKED, NOMEM, READONLY, CANTOPEN,
/// PROTOCOL). Two instances of this process share one `.mixed` folder (one with `syncsFiles`), and the
/// value-file names collide on purpose (three names for twelve keys, one key named like another's
/// alternate), so replaces walk `<name>`, `<name>.1`, … Operations: saves (inline and file, replacing either
/// kind), removals, removals by size, LRU trims to a count, remove-all, reads, and reopens (with a fault at
/// open). Checked after each: a failed single-transaction operation changed nothing (a failed save leaves the
/// old value), a successful one did exactly what it says, a read returns a value the model allows (never
/// another key's bytes, never a committed value lost), no error is damage (no rebuild, no `recoveryError`),
/// and the folder is consistent (`_checkInvariants`: no orphan file, no row without its file, no temporary).
/// `KVCACHE_FAULT_MODEL_SEED` replays a seed, `KVCACHE_FAULT_MODEL_SEEDS` / `_STEPS` change the run's size.
final class KVCacheFaultModelReviewTests: XCTestCase {
    static let keyCount = 12

    private struct Fault {
        var kind: KVStorageFaults.Operation
        var call: Int
        var errno: Int32
        var sqliteCode: Int32?
    }

    private static let sqliteCodes: [Int32] = [13, 10 | (3 << 8), 5, 6, 7, 8, 14, 15]
    private static let kinds: [KVStorageFaults.Operation] = [.fileWrite, .fileRead, .fileSync, .directorySync, .rename, .sqliteStep, .sqliteStep]

    private static func filename(_ index: Int) -> String { index == 9 ? "f0.1" : "f\(index % 3)" }

    private static func randomFault(_ rng: inout SplitMix64) -> Fault {
        let kind = kinds[rng.next(upTo: kinds.count)]
        let call = 1 + rng.next(upTo: 6)
        if kind == .sqliteStep || kind == .sqliteOpen {
            return Fault(kind: kind, call: call, errno: [0, EIO, ENOSPC, EMFILE][rng.next(upTo: 4)],
                         sqliteCode: sqliteCodes[rng.next(upTo: sqliteCodes.count)])
        }
        return Fault(kind: kind, call: call, errno: [ENOSPC, EIO, EMFILE][rng.next(upTo: 3)])
    }

    private static func plan(_ fault: Fault, on faults: KVStorageFaults) {
        if let code = fault.sqliteCode {
            faults.fail(fault.kind, onCall: fault.call, sqliteCode: code, errno: fault.errno)
        } else {
            faults.fail(fault.kind, onCall: fault.call, errno: fault.errno)
        }
    }

    func testRandomSchedulesWithTransientFaultsLoseNothing() throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let seed = environment["KVCACHE_FAULT_MODEL_SEED"].flatMap(UInt64.init) {
            seeds = [seed]
        } else {
            let count = environment["KVCACHE_FAULT_MODEL_SEEDS"].flatMap(Int.init) ?? 8
            seeds = (0..<UInt64(count)).map { 20_261_127 &+ $0 }
        }
        let steps = environment["KVCACHE_FAULT_MODEL_STEPS"].flatMap(Int.init) ?? 300
        for seed in seeds {
            let failuresBefore = testRun?.failureCount ?? 0
            try runSchedule(seed: seed, steps: steps)
            if (testRun?.failureCount ?? 0) > failuresBefore {
                print("KVCacheFaultModelReviewTests: seed \(seed) failed (KVCACHE_FAULT_MODEL_SEED=\(seed) replays it)")
                return
            }
        }
    }

    private func runSchedule(seed: UInt64, steps: Int) throws {
        let directory = try TemporaryDirectory("kvcache-fault-model")
        defer { try? directory.remove() }
        var rng = SplitMix64(seed: seed)
        let faults = [KVStorageFaults(), KVStorageFaults()]
        var instances: [KVStorage] = [
            try KVStorage(path: directory.path, type: .mixed, faults: faults[0]),
            try KVStorage(path: directory.path, type: .mixed, syncsFiles: true, faults: faults[1]),
        ]
        defer { for instance in instances { instance.close() } }
        // Every key's allowed values (one, except after an operation that may have partly run).
        var allowed: [String: [Data?]] = [:]
        for index in 0..<Self.keyCount { allowed["k\(index)"] = [nil] }
        var thrown = 0

        func check(_ error: KVCacheError, _ context: String) {
            XCTAssertFalse(SQLiteCode.isCorruption(error), "seed \(seed), \(context): a transient fault taken for damage: \(error)")
            switch error {
            case .io, .sqlite: break
            default: XCTFail("seed \(seed), \(context): unexpected error \(error)")
            }
        }

        for step in 0..<steps {
            let which = rng.next(upTo: 2)
            let storage = instances[which]
            let fault = rng.next(upTo: 4) == 0 ? nil : Self.randomFault(&rng)
            if let fault { Self.plan(fault, on: faults[which]) }
            let index = rng.next(upTo: Self.keyCount), key = "k\(index)"
            let dice = rng.next(upTo: 100)
            let context = "step \(step) on \(which), fault \(fault.map { "\($0.kind) #\($0.call) errno \($0.errno) code \($0.sqliteCode ?? 0)" } ?? "none")"
            var operation = ""
            do {
                if dice < 40 {
                    let inline = rng.next(upTo: 3) == 0
                    let value = testBytes(inline ? 1 + rng.next(upTo: 500) : 2_000 + rng.next(upTo: 30_000), seed: step * 100 + index)
                    operation = "save \(key) \(inline ? "inline" : "file") \(value.count)"
                    do {
                        try storage.save(key: key, value: value, filename: inline ? nil : Self.filename(index))
                        allowed[key] = [value]
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else if dice < 55 {
                    operation = "read \(key)"
                    do {
                        let value = try storage.itemValue(forKey: key)
                        XCTAssertTrue(allowed[key]!.contains(value),
                                      "seed \(seed), \(context), \(operation): read \(value.map { "\($0.count) bytes" } ?? "nothing"), allowed \(allowed[key]!.map { $0?.count ?? -1 })")
                        allowed[key] = [value]
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else if dice < 68 {
                    let keys = [key, "k\(rng.next(upTo: Self.keyCount))"]
                    operation = "remove \(keys)"
                    do {
                        try storage.removeItems(forKeys: keys)
                        for key in keys { allowed[key] = [nil] }
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else if dice < 76 {
                    let size = Int64(rng.next(upTo: 30_000))
                    operation = "remove larger than \(size)"
                    do {
                        try storage.removeItems(largerThan: size)
                        for (key, values) in allowed { allowed[key] = values.map { $0.flatMap { Int64($0.count) > size ? nil : $0 } } }
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else if dice < 86 {
                    let count = rng.next(upTo: Self.keyCount)
                    operation = "trim to \(count)"
                    // Batches commit one by one: any entry may have gone, on failure too.
                    for (key, values) in allowed where !values.contains(nil) { allowed[key] = values + [nil] }
                    do {
                        try storage.removeItems(toFitCount: count)
                        faults[which].disarm()
                        XCTAssertLessThanOrEqual(try storage.itemsCount(), count, "seed \(seed), \(context), \(operation)")
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else if dice < 89 {
                    operation = "remove all"
                    for (key, values) in allowed where !values.contains(nil) { allowed[key] = values + [nil] }
                    do {
                        try storage.removeAllItems()
                        for key in allowed.keys { allowed[key] = [nil] }
                    } catch {
                        thrown += 1
                        check(error, context + ", " + operation)
                    }
                } else {
                    // A reopen of this instance, with the fault (if any) moved to the open.
                    faults[which].disarm()
                    operation = "reopen"
                    storage.close()
                    let openFaults = KVStorageFaults()
                    if rng.next(upTo: 2) == 0 {
                        let kind: KVStorageFaults.Operation = rng.next(upTo: 2) == 0 ? .sqliteOpen : .sqliteStep
                        openFaults.fail(kind, onCall: 1 + rng.next(upTo: 12), sqliteCode: Self.sqliteCodes[rng.next(upTo: Self.sqliteCodes.count)],
                                        errno: [0, EMFILE, EIO][rng.next(upTo: 3)])
                    }
                    do {
                        instances[which] = try KVStorage(path: directory.path, type: .mixed, syncsFiles: which == 1, faults: openFaults)
                    } catch {
                        thrown += 1
                        check(error, context + ", reopen with a fault")
                        instances[which] = try KVStorage(path: directory.path, type: .mixed, syncsFiles: which == 1, faults: openFaults)
                    }
                    openFaults.disarm()
                    faults[which].disarm()
                    // Later faults go to the reopened instance's seam.
                    instances[which].close()
                    instances[which] = try KVStorage(path: directory.path, type: .mixed, syncsFiles: which == 1, faults: faults[which])
                    XCTAssertNil(instances[which].recoveryError, "seed \(seed), \(context), reopen: \(String(describing: instances[which].recoveryError))")
                }
            }
            faults[which].disarm()
            // Then: every key reads back as the model allows, from the other instance (a fresh snapshot).
            let reader = instances[1 - which]
            reader.endReadSnapshot()
            for index in 0..<Self.keyCount {
                let key = "k\(index)"
                let value = try reader.itemValue(forKey: key)
                XCTAssertTrue(allowed[key]!.contains(value),
                              "seed \(seed), \(context), after \(operation): \(key) reads \(value.map { "\($0.count) bytes" } ?? "nothing"), allowed \(allowed[key]!.map { $0?.count ?? -1 })")
                allowed[key] = [value]
            }
            reader.endReadSnapshot()
            XCTAssertEqual(try reader._checkInvariants(), [], "seed \(seed), \(context), after \(operation)")
            for instance in instances { XCTAssertNil(instance.recoveryError, "seed \(seed), \(context)") }
            if (testRun?.failureCount ?? 0) > 0 { return }
        }
        XCTAssertGreaterThan(thrown, steps / 10, "seed \(seed): faults that surfaced")
    }
}
