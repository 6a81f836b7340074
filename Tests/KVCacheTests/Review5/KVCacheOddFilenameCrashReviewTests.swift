@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review (attack; the code held when this test was written): the intent journal frames each record by its
/// byte count, so a value file name may hold any byte but `/` and NUL. A writer saving files whose names
/// hold newlines, spaces, digits that look like a record's length, a record-shaped tail, combining marks and
/// 250 bytes (so its `.1` alternate is 252) is SIGKILLed at random moments; after each kill the exclusive
/// open cleans up from the journal alone and must leave no orphan, no row without its file, no temporary,
/// and every key at its last acknowledged value or the one in flight.
/// Seeded (SplitMix64): `KVCACHE_ODDNAME_SEED` reproduces a run.
final class KVCacheOddFilenameCrashReviewTests: XCTestCase {
    static let names = [
        "line\nbreak", "  spaced  name  ", "12 3 0000abcd\n", "tail 7 x 0badc0de\n8 y",
        "caf\u{E9}", "cafe\u{301}", String(repeating: "L", count: 250), "\u{1F5BC}\u{FE0F} \u{10FFFF}",
    ]

    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Child side: saves, replaces and removes until killed; prints `BEGIN <key> <variant>` (-1: a removal)
    /// before each and `ACK` after.
    func testChildOddNameWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_ODDNAME_PATH"], let seed = environment["KVCACHE_ODDNAME_CHILD_SEED"].flatMap(UInt64.init)
        else { throw XCTSkip("child writer: runs only inside testOddFileNamesSurviveKillsMidWrite") }
        let storage = try KVStorage(path: path, type: .file)
        var rng = SplitMix64(seed: seed)
        // Made up front, so the child's time goes to its saves and removals (where the kills should land).
        let values = (0..<(Self.names.count * Self.variants)).map { Self.value($0) }
        emitLine("READY")
        for _ in 0..<1_000_000 {
            let key = rng.next(upTo: Self.names.count)
            let variant = rng.next(upTo: 8) == 0 ? -1 : key * Self.variants + rng.next(upTo: Self.variants)
            emitLine("BEGIN \(key) \(variant)")
            if variant < 0 {
                try storage.removeItem(forKey: "k\(key)")
            } else {
                try storage.save(key: "k\(key)", value: values[variant], filename: Self.names[key])
            }
            emitLine("ACK")
        }
    }

    static let variants = 4

    /// Value `variant` (of `names.count * variants`): 2–50 KB.
    static func value(_ variant: Int) -> Data { testBytes(2_000 + variant * 1_500, seed: variant) }

    func testOddFileNamesSurviveKillsMidWrite() throws {
        let seed = ProcessInfo.processInfo.environment["KVCACHE_ODDNAME_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0..<1_000_000)
        print("KVCACHE_ODDNAME_SEED=\(seed)")
        var rng = SplitMix64(seed: seed)
        var acknowledged: [Int: Int] = [:] // key → variant acknowledged last (-1: absent)
        var examined = 0
        for round in 0..<12 {
            let child = try ChildProcess(test: "KVCacheTests.KVCacheOddFilenameCrashReviewTests/testChildOddNameWriter",
                                         environment: ["KVCACHE_ODDNAME_PATH": directory.path,
                                                       "KVCACHE_ODDNAME_CHILD_SEED": "\(rng.next())"])
            XCTAssertTrue(child.waitUntilReady(timeout: 60), "seed \(seed): child \(round) never got ready")
            // Lets it run a random while (its output is the clock: a number of operations begun).
            let target = 5 + rng.next(upTo: 60)
            let deadline = Date().addingTimeInterval(20)
            while child.outputSoFar.components(separatedBy: "BEGIN").count <= target && Date() < deadline {}
            child.kill()
            let lines = child.finish()
            var inFlight: (key: Int, variant: Int)?
            for line in lines {
                let parts = line.split(separator: " ")
                if parts.first == "BEGIN", parts.count == 3, let key = Int(parts[1]), let variant = Int(parts[2]) {
                    inFlight = (key, variant)
                } else if line == "ACK", let done = inFlight {
                    acknowledged[done.key] = done.variant
                    inFlight = nil
                }
            }
            let storage = try KVStorage(path: directory.path, type: .file)
            defer { storage.close() }
            XCTAssertEqual(try storage._checkInvariants(), [], "seed \(seed), round \(round): the cleanup after the kill left these")
            for key in 0..<Self.names.count {
                let value = try storage.itemValue(forKey: "k\(key)")
                let state = { (variant: Int) -> Data? in variant < 0 ? nil : Self.value(variant) }
                var allowed = [state(acknowledged[key] ?? -1)]
                if let flight = inFlight, flight.key == key { allowed.append(state(flight.variant)) }
                XCTAssertTrue(allowed.contains(value), "seed \(seed), round \(round): key \(key) (\(Self.names[key].debugDescription)) reads \(value?.count ?? -1) bytes, not an allowed state")
                // Settle it for the next round: the state it reads is the one acknowledged from now on.
                if let flight = inFlight, flight.key == key, value == allowed.last { acknowledged[key] = flight.variant }
            }
            XCTAssertTrue(storage.openReport.ranCrashCleanup, "the open after a kill cleans up")
            XCTAssertFalse(storage.cleanupReport.fullScan, "seed \(seed), round \(round): the journal alone guides the cleanup")
            examined += storage.cleanupReport.filesExamined
        }
        print("odd names: the 12 cleanups looked at \(examined) journaled names and temporaries")
        XCTAssertGreaterThan(examined, 0, "seed \(seed): no kill landed inside a write")
    }
}
