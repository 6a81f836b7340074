@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review (attack; the code held when this test was written): a writer process SIGKILLed at random moments
/// of its saves, replaces (the `name`/`name.1` alternation), removes and trims while another instance (this
/// process, the survivor) keeps the folder open and writes files of its own between the kills. The killed
/// writers' intent-journal records pile up behind (and are interleaved with the scopes of) the survivor's,
/// which truncates back to where its own scopes began; no exclusive open happens until the end, but after
/// some kills the survivor runs the recovery protocol (a reported, unconfirmed corruption), whose exclusive
/// reopen cleans up after the dead writers from the journal and must leave the store exactly consistent with
/// no dead slot. Checked:
/// after every kill the survivor reads every key as one of its allowed states (the kill's in-flight
/// operation happened or not — what the survivor sees fixes which); at the end the exclusive opener runs the
/// crash cleanup iff a writer died, after it no orphan file, no row without its file, no temporary, and every
/// acknowledged value reads back intact; the open after that is clean and cleans nothing.
/// Seeded (SplitMix64): `KVCACHE_SURVIVOR_SEED` reproduces a run, `KVCACHE_SURVIVOR_ROUNDS` changes its length.
final class KVCacheSurvivorJournalReviewTests: XCTestCase {
    static let childKeys = 12
    static let survivorKeys = 6

    private enum State: Hashable { case absent; case value(seed: Int, size: Int) }

    private static func bytes(_ state: State) -> Data? {
        switch state {
        case .absent: nil
        case .value(let seed, let size): testBytes(size, seed: seed)
        }
    }

    /// Child side: writes until killed; prints `BEGIN set <key> <seed> <size>`, `BEGIN del <key>…`,
    /// `BEGIN trim` then `ACK` (a trim first lists the keys left: `KEYS …`).
    func testChildWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_SURVIVOR_PATH"], let round = environment["KVCACHE_SURVIVOR_ROUND"].flatMap(Int.init),
              let seed = environment["KVCACHE_SURVIVOR_CHILD_SEED"].flatMap(UInt64.init)
        else { throw XCTSkip("child writer: runs only inside testSIGKILLedWritersBesideASurvivorLoseNothingAndLeaveNothing") }
        let storage = try KVStorage(path: path, type: .mixed)
        var rng = SplitMix64(seed: seed)
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            let key = "c\(rng.next(upTo: Self.childKeys))"
            let dice = rng.next(upTo: 100)
            if dice < 55 {
                let seed = round * 1_000_000 + sequence
                let inline = rng.next(upTo: 4) == 0
                let size = inline ? 1 + rng.next(upTo: 400) : 2_000 + rng.next(upTo: 12_000)
                emitLine("BEGIN set \(key) \(seed) \(size)")
                try storage.save(key: key, value: testBytes(size, seed: seed), filename: inline ? nil : "f-\(key)")
            } else if dice < 80 {
                emitLine("BEGIN del \(key)")
                try storage.removeItem(forKey: key)
            } else if dice < 90 {
                let keys = (0..<3).map { _ in "c\(rng.next(upTo: Self.childKeys))" }
                emitLine("BEGIN del " + keys.joined(separator: " "))
                try storage.removeItems(forKeys: keys)
            } else {
                emitLine("BEGIN trim")
                // Trims count every entry, the survivor's too: the list below covers the child's keys only.
                try storage.removeItems(toFitCount: Self.survivorKeys + rng.next(upTo: Self.childKeys))
                var left: [String] = []
                for index in 0..<Self.childKeys where try storage.itemInfo(forKey: "c\(index)") != nil { left.append("c\(index)") }
                emitLine("KEYS " + left.joined(separator: " "))
            }
            emitLine("ACK")
        }
    }

    func testSIGKILLedWritersBesideASurvivorLoseNothingAndLeaveNothing() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["KVCACHE_SURVIVOR_SEED"].flatMap(UInt64.init) ?? 20_261_124
        let rounds = environment["KVCACHE_SURVIVOR_ROUNDS"].flatMap(Int.init) ?? 16
        print("KVCacheSurvivorJournalReviewTests seed \(seed) (KVCACHE_SURVIVOR_SEED), \(rounds) rounds")
        let directory = try TemporaryDirectory("kvcache-survivor")
        defer { try? directory.remove() }
        var rng = SplitMix64(seed: seed)
        // Every key's allowed states (one, except right after a kill, until the survivor reads it).
        var allowed: [String: Set<State>] = [:]
        for index in 0..<Self.childKeys { allowed["c\(index)"] = [.absent] }
        for index in 0..<Self.survivorKeys { allowed["s\(index)"] = [.absent] }

        let survivor = try KVStorage(path: directory.path, type: .mixed)
        survivor.recoveryState.lockWait = 0.2
        var kills = 0, acknowledged = 0, recoveries = 0
        // Kills whose dead slots no recovery of the survivor has cleaned up after.
        var deadSinceRecovery = 0
        let corrupt = KVCacheError.sqlite(code: 11, message: "database disk image is malformed", operation: "test")
        for round in 0..<rounds {
            // Every fourth round is killed just after the child began a trim (a batch of names in the journal).
            let aimed = round % 4 == 3
            let child = try ChildProcess(test: "KVCacheTests.KVCacheSurvivorJournalReviewTests/testChildWriter",
                                         environment: ["KVCACHE_SURVIVOR_PATH": directory.path,
                                                       "KVCACHE_SURVIVOR_ROUND": "\(round)",
                                                       "KVCACHE_SURVIVOR_CHILD_SEED": "\(rng.next())"],
                                         readyMarker: aimed ? "BEGIN trim\n" : "READY\n")
            XCTAssertTrue(child.waitUntilReady(timeout: 60), "seed \(seed): child \(round) never got ready")
            // The survivor writes meanwhile (its records interleave with the child's); the pause picks the kill's moment.
            for step in 0..<(aimed ? 0 : rng.next(upTo: 12)) {
                let key = "s\(rng.next(upTo: Self.survivorKeys))"
                if rng.next(upTo: 4) == 0 {
                    try survivor.removeItem(forKey: key)
                    allowed[key] = [.absent]
                } else {
                    let state = State.value(seed: -(round * 1_000 + step) - 1, size: 1_500 + rng.next(upTo: 9_000))
                    try survivor.save(key: key, value: Self.bytes(state)!, filename: "g-\(key)")
                    allowed[key] = [state]
                }
            }
            usleep(UInt32(rng.next(upTo: aimed ? 3_000 : 30_000)))
            child.kill()
            let lines = child.finish()
            if child.wasKilled {
                kills += 1
                deadSinceRecovery += 1
            }
            acknowledged += lines.filter { $0 == "ACK" }.count
            replay(lines, into: &allowed)
            // A child's trim counts the survivor's entries too and may take any of them (its list covers its own keys).
            if lines.contains("BEGIN trim") {
                for index in 0..<Self.survivorKeys { allowed["s\(index)"]!.insert(.absent) }
            }

            // What the survivor reads now fixes the state of the operation in flight.
            for (key, states) in allowed.sorted(by: { $0.key < $1.key }) {
                let read = try survivor.itemValue(forKey: key)
                guard let match = states.first(where: { Self.bytes($0) == read }) else {
                    XCTFail("seed \(seed) round \(round): the survivor reads \(key) as \(read.map { "\($0.count) bytes" } ?? "absent"), "
                            + "allowed \(states); child output tail \(lines.suffix(4))")
                    return
                }
                allowed[key] = [match]
            }

            // Some rounds: the survivor meets (reported, unconfirmed) damage and runs the recovery protocol.
            // Alone in the folder now, it reopens exclusively and cleans up after the dead writers from the
            // journal: the store must then be exactly consistent, and the dead slots free.
            if rng.next(upTo: 3) == 0 {
                let runs = survivor.cleanupReport.runs
                _ = Result { () throws(KVCacheError) in try survivor.guarded { () throws(KVCacheError) in throw corrupt } }
                _ = try survivor.itemsCount() // the next operation reopens if the recovery could not finish
                recoveries += 1
                XCTAssertEqual(survivor.cleanupReport.runs, runs + 1, "seed \(seed) round \(round): the recovery did not clean up")
                XCTAssertNil(survivor.recoveryError, "seed \(seed) round \(round): an unconfirmed report rebuilt the store")
                XCTAssertEqual(try survivor._checkInvariants(), [], "seed \(seed) round \(round): after the recovery's cleanup")
                let slots = try KVStorage._instanceSlots(atPath: directory.path)
                XCTAssertEqual(slots?.dead, 0, "seed \(seed) round \(round): dead slots after the recovery: \(String(describing: slots))")
                deadSinceRecovery = 0
            }
        }
        survivor.close()
        print("KVCacheSurvivorJournalReviewTests: \(kills) kills, \(acknowledged) acknowledged child operations, \(recoveries) recoveries")
        XCTAssertEqual(kills, rounds, "seed \(seed): every child must die of SIGKILL")
        XCTAssertGreaterThan(acknowledged, rounds, "seed \(seed): the children must get work done before the kills")

        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(storage.openReport.ranCrashCleanup, deadSinceRecovery > 0,
                       "seed \(seed): \(deadSinceRecovery) writers died since the last recovery; open: \(storage.openReport)")
        XCTAssertEqual(try storage._checkInvariants(), [], "seed \(seed): after the crash cleanup")
        for (key, states) in allowed.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(try storage.itemValue(forKey: key), Self.bytes(states.first!), "seed \(seed): \(key)")
        }
        storage.close()
        let again = try KVStorage(path: directory.path, type: .mixed)
        defer { again.close() }
        XCTAssertTrue(again.openReport.previousShutdownWasClean, "seed \(seed): \(again.openReport)")
        XCTAssertFalse(again.openReport.ranCrashCleanup, "seed \(seed): \(again.openReport)")
    }

    /// Applies the acknowledged operations of a child's output; the one in flight widens the allowed states.
    private func replay(_ lines: [Substring], into allowed: inout [String: Set<State>]) {
        var begun: [Substring]?
        var keysLeft: Set<String>?
        func apply(_ parts: [Substring], acknowledged: Bool) {
            switch parts[1] {
            case "set":
                let key = String(parts[2]), state = State.value(seed: Int(parts[3])!, size: Int(parts[4])!)
                allowed[key] = acknowledged ? [state] : allowed[key, default: []].union([state])
            case "del":
                for key in parts.dropFirst(2).map(String.init) {
                    allowed[key] = acknowledged ? [.absent] : allowed[key, default: []].union([.absent])
                }
            default: // trim
                for key in allowed.keys where key.hasPrefix("c") {
                    if acknowledged, let keysLeft { if !keysLeft.contains(key) { allowed[key] = [.absent] } }
                    else { allowed[key]!.insert(.absent) }
                }
            }
        }
        for line in lines {
            let parts = line.split(separator: " ")
            if parts.first == "BEGIN", parts.count >= 2 {
                begun = parts
                keysLeft = nil
            } else if parts.first == "KEYS" {
                keysLeft = Set(parts.dropFirst().map(String.init))
            } else if line == "ACK", let done = begun {
                apply(done, acknowledged: keysLeft != nil || done[1] != "trim")
                begun = nil
            }
        }
        if let inFlight = begun { apply(inFlight, acknowledged: false) }
    }
}
