@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// A child process doing mixed writes is killed with SIGKILL at random moments; after each kill the store
/// reopens with `quick_check` ok, every acknowledged write intact, no row without its file and no orphan.
final class CrashSafetyTests: XCTestCase {
    static let keyCount = 40
    static let inlineThreshold = 2_000

    /// The value of write `seed`.
    static func value(seed: Int, size: Int) -> Data { testBytes(size, seed: seed) }

    /// Child side: runs only when re-executed by the parent test (`KVCACHE_CHILD_PATH` set).
    /// Prints `BEGIN set <key> <seed> <size>` / `BEGIN del <key>` before each operation and `ACK` after it
    /// returned, until killed.
    func testChildWriter() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_CHILD_PATH"], let round = environment["KVCACHE_CHILD_ROUND"].flatMap(Int.init)
        else { throw XCTSkip("child writer: runs only inside testSIGKILLAtRandomMomentsLosesNoAcknowledgedWrite") }
        let cache = try DiskCache(path: path, inlineThreshold: Self.inlineThreshold)
        var rng = SplitMix64(seed: UInt64(round) &* 7919)
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            let key = "k\(rng.next(upTo: Self.keyCount))"
            if rng.next(upTo: 10) < 7 {
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

    func testSIGKILLAtRandomMomentsLosesNoAcknowledgedWrite() throws {
        let directory = try TemporaryDirectory("kvcache-crash")
        defer { try? directory.remove() }
        var expected: [String: State] = [:]
        var rng = SplitMix64(seed: 42)
        var kills = 0
        var acknowledged = 0
        for round in 0..<56 {
            let child = try ChildProcess(test: "KVCacheTests.CrashSafetyTests/testChildWriter",
                                         environment: ["KVCACHE_CHILD_PATH": directory.path, "KVCACHE_CHILD_ROUND": "\(round)"])
            // The delays below choose the random moment of the kill; they do not wait for work.
            if round % 4 == 3 {
                // Some kills land anywhere, including during the child's open-time cleanup.
                usleep(UInt32(rng.next(upTo: 150_000)))
            } else {
                XCTAssertTrue(child.waitUntilReady(timeout: 60), "child \(round) never got ready")
                usleep(UInt32(rng.next(upTo: 40_000)))
            }
            child.kill()
            let lines = child.finish()
            if child.wasKilled { kills += 1 }

            // Replay the acknowledged operations; the one in flight may or may not have happened.
            var inFlight: (key: String, after: State)?
            for line in lines {
                let parts = line.split(separator: " ")
                if parts.first == "BEGIN", parts.count >= 3 {
                    let key = String(parts[2])
                    if parts[1] == "set", parts.count == 5, let seed = Int(parts[3]), let size = Int(parts[4]) {
                        inFlight = (key, .value(seed: seed, size: size))
                    } else {
                        inFlight = (key, .absent)
                    }
                } else if line == "ACK", let done = inFlight {
                    expected[done.key] = done.after
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
                    if let inFlight, inFlight.key == key, inFlight.after == found {
                        expected[key] = found // the unacknowledged write landed
                    } else {
                        XCTFail("round \(round): \(key) is \(found), expected \(before)")
                    }
                }
            }
            storage.close()
        }
        print("crash test: \(kills) kills, \(acknowledged) acknowledged operations")
        XCTAssertGreaterThanOrEqual(kills, 50)
        XCTAssertGreaterThan(acknowledged, 200, "children should get real work done between kills")
    }
}
