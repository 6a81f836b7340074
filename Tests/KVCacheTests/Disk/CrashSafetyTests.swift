@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// A child process doing mixed writes is killed with SIGKILL at random moments (some rounds just after it
/// began a trim, a recovery or a rebuild, and at least one kill must land in each); after each kill the store
/// reopens with `quick_check` ok, every acknowledged write intact, no row without its file and no orphan.
final class CrashSafetyTests: XCTestCase {
    static let keyCount = 40
    static let inlineThreshold = 2_000

    /// The value of write `seed`.
    static func value(seed: Int, size: Int) -> Data { testBytes(size, seed: seed) }

    /// Child side: runs only when re-executed by the parent test (`KVCACHE_CHILD_PATH` set).
    /// Prints `BEGIN set <key> <seed> <size>` / `BEGIN del <key>` / `BEGIN trim` / `BEGIN recover` /
    /// `BEGIN rebuild` before each operation and `ACK` after it returned (a trim first lists the keys left:
    /// `KEYS …`), until killed. Rounds differ: some trim often, some run the recovery protocol often (a
    /// reported corruption the check does not confirm: nothing may change), some damage the manifest for
    /// real once (the rebuild loses everything, by design).
    func testChildWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_CHILD_PATH"], let round = environment["KVCACHE_CHILD_ROUND"].flatMap(Int.init)
        else { throw XCTSkip("child writer: runs only inside testSIGKILLAtRandomMomentsLosesNoAcknowledgedWrite") }
        let cache = try DiskCache(path: path, inlineThreshold: Self.inlineThreshold)
        var rng = SplitMix64(seed: UInt64(round) &* 7919)
        let corrupt = KVCacheError.sqlite(code: 11, message: "database disk image is malformed", operation: "test")
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            let key = "k\(rng.next(upTo: Self.keyCount))"
            let dice = rng.next(upTo: 100)
            if round % 8 == 6 && sequence == 0 {
                emitLine("BEGIN rebuild")
                try cache.core.withStorage { (storage) throws(KVCacheError) in
                    _ = try storage.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
                    guard (try? testBytes(8_192, seed: round).write(to: URL(fileURLWithPath: path + "/manifest.sqlite"))) != nil else {
                        throw .io(errno: EIO, operation: "damage", path: path)
                    }
                    _ = Result { () throws(KVCacheError) in try storage.guarded { () throws(KVCacheError) in throw corrupt } }
                }
            } else if round % 4 == 1 && dice < 10 {
                emitLine("BEGIN trim")
                try cache.trim(toCount: rng.next(upTo: Self.keyCount))
                emitLine("KEYS " + (try cache.allKeys()).joined(separator: " "))
            } else if round % 4 == 2 && dice < 40 {
                emitLine("BEGIN recover")
                try cache.core.withStorage { (storage) throws(KVCacheError) in
                    _ = Result { () throws(KVCacheError) in try storage.guarded { () throws(KVCacheError) in throw corrupt } }
                }
            } else if dice < 70 {
                let seed = round * 1_000_000 + sequence
                let size = rng.next(upTo: 2) == 0 ? 1 + rng.next(upTo: Self.inlineThreshold) : Self.inlineThreshold + 1 + rng.next(upTo: 40_000)
                emitLine("BEGIN set \(key) \(seed) \(size)")
                try cache.setObject(Self.value(seed: seed, size: size), forKey: key, extendedData: Data("\(seed)".utf8))
            } else {
                emitLine("BEGIN del \(key)")
                try cache.removeObject(forKey: key)
            }
            emitLine("ACK")
        }
    }

    private enum State: Equatable { case absent; case value(seed: Int, size: Int) }

    /// What a child line announces.
    private enum Operation { case write(key: String, after: State), trim, recover, rebuild }

    func testSIGKILLAtRandomMomentsLosesNoAcknowledgedWrite() throws {
        let directory = try TemporaryDirectory("kvcache-crash")
        defer { try? directory.remove() }
        var expected: [String: State] = [:]
        var rng = SplitMix64(seed: 42)
        var kills = 0
        var acknowledged = 0
        var trims = 0, recoveries = 0, rebuilds = 0
        // Kills that landed while a trim, a recovery (the protocol after reported damage) or a rebuild (real
        // damage) was in flight: some rounds aim at them (killed just after the child announced one).
        var killsDuringTrim = 0, killsDuringRecovery = 0, killsDuringRebuild = 0
        for round in 0..<56 {
            // Trim rounds 5, 13, 21, …, recovery rounds 2, 10, 18, … and rebuild rounds 6, 22, 38, 54 are
            // killed just after one began.
            let target: String? = round % 8 == 5 ? "BEGIN trim\n" : round % 8 == 2 ? "BEGIN recover\n"
                : round % 16 == 6 ? "BEGIN rebuild\n" : nil
            let child = try ChildProcess(test: "KVCacheTests.CrashSafetyTests/testChildWriter",
                                         environment: ["KVCACHE_CHILD_PATH": directory.path, "KVCACHE_CHILD_ROUND": "\(round)"],
                                         readyMarker: target ?? "READY\n")
            // The delays below choose the random moment of the kill; they do not wait for work.
            if let target {
                XCTAssertTrue(child.waitUntilReady(timeout: 60), "child \(round) never printed \(target)")
                usleep(UInt32(rng.next(upTo: 1_500)))
            } else if round % 4 == 3 {
                // Some kills land anywhere, including during the child's open-time cleanup.
                usleep(UInt32(rng.next(upTo: 150_000)))
            } else if round % 16 == 14 {
                // Some rebuild rounds live long enough to finish the rebuild (the others die in it).
                XCTAssertTrue(child.waitUntilReady(timeout: 60), "child \(round) never got ready")
                usleep(UInt32(150_000 + rng.next(upTo: 100_000)))
            } else {
                XCTAssertTrue(child.waitUntilReady(timeout: 60), "child \(round) never got ready")
                usleep(UInt32(rng.next(upTo: 40_000)))
            }
            child.kill()
            let lines = child.finish()
            if child.wasKilled { kills += 1 }

            // Replay the acknowledged operations; the one in flight may or may not have happened (a trim or a
            // rebuild in part: each key keeps its state or is gone).
            var inFlight: Operation?
            var keysLeft: Set<String>?
            for line in lines {
                let parts = line.split(separator: " ")
                if parts.first == "BEGIN", parts.count >= 2 {
                    keysLeft = nil
                    switch parts[1] {
                    case "set" where parts.count == 5:
                        inFlight = .write(key: String(parts[2]), after: .value(seed: Int(parts[3])!, size: Int(parts[4])!))
                    case "del": inFlight = .write(key: String(parts[2]), after: .absent)
                    case "trim": inFlight = .trim
                    case "recover": inFlight = .recover
                    default: inFlight = .rebuild
                    }
                } else if parts.first == "KEYS" {
                    keysLeft = Set(parts.dropFirst().map(String.init))
                } else if line == "ACK", let done = inFlight {
                    switch done {
                    case .write(let key, let after): expected[key] = after
                    case .trim:
                        // The trim's own list is what is left (a trim without its list cannot be acknowledged).
                        for key in expected.keys where !(keysLeft ?? []).contains(key) { expected[key] = .absent }
                        trims += 1
                    case .recover: recoveries += 1
                    case .rebuild:
                        expected.removeAll()
                        rebuilds += 1
                    }
                    inFlight = nil
                    acknowledged += 1
                }
            }

            let storage = try KVStorage(path: directory.path, type: .mixed)
            XCTAssertEqual(try storage._quickCheck(), ["ok"], "round \(round)")
            XCTAssertEqual(try storage._checkInvariants(), [], "round \(round)")
            for index in 0..<Self.keyCount {
                let key = "k\(index)"
                let before = expected[key] ?? .absent
                let item = try storage.item(forKey: key)
                let found: State
                if let item {
                    let seed = Int(String(decoding: item.extendedData ?? Data(), as: UTF8.self)) ?? -1
                    found = .value(seed: seed, size: item.value.count)
                    XCTAssertEqual(item.value, Self.value(seed: seed, size: item.value.count), "round \(round): \(key) corrupt")
                } else {
                    found = .absent
                }
                if found != before {
                    switch inFlight {
                    case .write(let inFlightKey, let after) where inFlightKey == key && after == found:
                        expected[key] = found // the unacknowledged write landed
                    case .trim? where found == .absent, .rebuild? where found == .absent:
                        expected[key] = found // the unacknowledged trim or rebuild got this far
                    default:
                        XCTFail("round \(round): \(key) is \(found), expected \(before) (in flight: \(String(describing: inFlight)))")
                    }
                }
            }
            if case .rebuild? = inFlight, storage.recoveryError != nil { expected.removeAll() }
            switch inFlight {
            case .trim?: killsDuringTrim += 1
            case .recover?: killsDuringRecovery += 1
            case .rebuild?: killsDuringRebuild += 1
            default: break
            }
            storage.close()
        }
        print("crash test: \(kills) kills, \(acknowledged) acknowledged operations (\(trims) trims, \(recoveries) recoveries, \(rebuilds) rebuilds); "
              + "killed during \(killsDuringTrim) trims, \(killsDuringRecovery) recoveries, \(killsDuringRebuild) rebuilds")
        XCTAssertGreaterThanOrEqual(kills, 50)
        XCTAssertGreaterThan(acknowledged, 200, "children should get real work done between kills")
        XCTAssertGreaterThan(trims, 0)
        XCTAssertGreaterThan(recoveries, 0)
        XCTAssertGreaterThan(rebuilds, 0)
        XCTAssertGreaterThan(killsDuringTrim, 0)
        XCTAssertGreaterThan(killsDuringRecovery, 0)
        XCTAssertGreaterThan(killsDuringRebuild, 0)
    }
}
