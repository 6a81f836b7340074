@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 6 (attack on f611e32; the code held when this was written, kept as a regression test): acknowledged
/// values across kills + reaping + more kills. Each round a writer process (saves in files and inline,
/// replaces, removes) is SIGKILLed at a random moment, then a visitor process — an opener that is not
/// exclusive, so it reaps the dead writer's slot, removes its temporaries and works off its intent journal
/// beside this process's survivor instance — is SIGKILLed at a random moment of its open (mid-reap, mid
/// work-off, or after). After every round the survivor reads every key as one of its allowed states (the
/// writer's in-flight operation happened or not); at the end, an exclusive open finds the store consistent
/// and every acknowledged value intact.
/// Seeded (SplitMix64): `KVCACHE_REAPLOOP_SEED` reproduces a run, `KVCACHE_REAPLOOP_ROUNDS` changes its length.
final class KVCacheReapingKillLoopReviewTests: XCTestCase {
    static let keys = 8

    /// Child side: writes until killed; prints `BEGIN set <key> <seed> <size> <file>` or `BEGIN del <key>`,
    /// then `ACK`.
    func testChildWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_REAPLOOP_PATH"], let seed = environment["KVCACHE_REAPLOOP_CHILD_SEED"].flatMap(UInt64.init)
        else { throw XCTSkip("child writer: runs only inside KVCacheReapingKillLoopReviewTests") }
        let storage = try KVStorage(path: path, type: .mixed)
        var rng = SplitMix64(seed: seed)
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            let key = "c\(rng.next(upTo: Self.keys))"
            if rng.next(upTo: 100) < 70 {
                let valueSeed = Int(seed % 100_000) * 1_000_000 + sequence
                let inline = rng.next(upTo: 4) == 0
                let size = inline ? 1 + rng.next(upTo: 300) : 2_000 + rng.next(upTo: 200_000)
                emitLine("BEGIN set \(key) \(valueSeed) \(size)")
                try storage.save(key: key, value: testBytes(size, seed: valueSeed), filename: inline ? nil : "f-\(key)")
            } else {
                emitLine("BEGIN del \(key)")
                try storage.removeItem(forKey: key)
            }
            emitLine("ACK")
        }
    }

    /// Child side: opens (reaping beside the survivor) and closes, in a loop, until killed.
    func testChildVisitor() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_REAPLOOP_PATH"] else {
            throw XCTSkip("child visitor: runs only inside KVCacheReapingKillLoopReviewTests")
        }
        emitLine("READY")
        while true {
            let storage = try KVStorage(path: path, type: .mixed)
            storage.close()
        }
    }

    private enum State: Hashable { case absent; case value(seed: Int, size: Int) }

    func testAcknowledgedValuesSurviveKillsReapingAndMoreKills() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["KVCACHE_REAPLOOP_SEED"].flatMap(UInt64.init) ?? 20_261_124_6
        let rounds = environment["KVCACHE_REAPLOOP_ROUNDS"].flatMap(Int.init) ?? 8
        print("KVCacheReapingKillLoopReviewTests seed \(seed) (KVCACHE_REAPLOOP_SEED), \(rounds) rounds")
        let directory = try TemporaryDirectory("kvcache-reaploop")
        defer { try? directory.remove() }
        var rng = SplitMix64(seed: seed)
        var state: [String: State] = [:]
        for index in 0..<Self.keys { state["c\(index)"] = .absent }
        let survivor = try KVStorage(path: directory.path, type: .mixed)
        for round in 0..<rounds {
            let childSeed = rng.next()
            let writer = try ChildProcess(test: "KVCacheTests.KVCacheReapingKillLoopReviewTests/testChildWriter",
                                          environment: ["KVCACHE_REAPLOOP_PATH": directory.path,
                                                        "KVCACHE_REAPLOOP_CHILD_SEED": String(childSeed)])
            guard writer.waitUntilReady(timeout: 60) else {
                writer.kill()
                XCTFail("seed \(seed) round \(round): the writer never got ready: \(writer.outputSoFar)")
                break
            }
            // Kill after a random number of acknowledged operations (polling an external process, with a deadline).
            let target = 1 + rng.next(upTo: 30)
            let deadline = Date().addingTimeInterval(10)
            while writer.outputSoFar.components(separatedBy: "ACK\n").count - 1 < target && Date() < deadline { usleep(200) }
            usleep(UInt32(rng.next(upTo: 3_000)))
            writer.kill()
            let lines = writer.finish()
            // The allowed states: every acknowledged operation happened; the one in flight maybe.
            var allowed: [String: Set<State>] = state.mapValues { [$0] }
            var pending: (key: String, state: State)?
            for line in lines {
                let words = line.split(separator: " ")
                if words.first == "BEGIN" && words.count >= 3 {
                    let key = String(words[2])
                    pending = words[1] == "set" ? (key, .value(seed: Int(words[3])!, size: Int(words[4])!)) : (key, .absent)
                } else if line == "ACK", let done = pending {
                    allowed[done.key] = [done.state]
                    pending = nil
                }
            }
            if let inFlight = pending { allowed[inFlight.key, default: []].insert(inFlight.state) }
            // A visitor killed at a random moment of its opens (reaping, working off the journal, or after).
            let visitor = try ChildProcess(test: "KVCacheTests.KVCacheReapingKillLoopReviewTests/testChildVisitor",
                                           environment: ["KVCACHE_REAPLOOP_PATH": directory.path])
            if visitor.waitUntilReady(timeout: 60) { usleep(UInt32(rng.next(upTo: 20_000))) }
            visitor.kill()
            _ = visitor.finish()
            for (key, options) in allowed.sorted(by: { $0.key < $1.key }) {
                let read = try survivor.itemValue(forKey: key)
                let match = options.first { option in
                    switch option {
                    case .absent: read == nil
                    case .value(let valueSeed, let size): read == testBytes(size, seed: valueSeed)
                    }
                }
                guard let match else {
                    XCTFail("seed \(seed) round \(round): \(key) reads \(read.map { "\($0.count) bytes" } ?? "nothing"), allowed \(options)")
                    continue
                }
                state[key] = match
            }
        }
        survivor.close()
        let final = try KVStorage(path: directory.path, type: .mixed)
        defer { final.close() }
        XCTAssertEqual(try final._checkInvariants(), [], "seed \(seed)")
        for (key, expected) in state.sorted(by: { $0.key < $1.key }) {
            let read = try final.itemValue(forKey: key)
            switch expected {
            case .absent: XCTAssertNil(read, "seed \(seed): \(key)")
            case .value(let valueSeed, let size): XCTAssertEqual(read, testBytes(size, seed: valueSeed), "seed \(seed): \(key)")
            }
        }
    }
}
