@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Two processes write and read one folder at the same time: no lost and no corrupt value.
final class TwoProcessTests: XCTestCase {
    static let rounds = 400
    static let ownKeys = 50

    /// A self-describing value: 8 bytes of seed, 4 of size, then bytes derived from the seed.
    static func value(seed: Int, size: Int) -> Data {
        var data = Data()
        withUnsafeBytes(of: Int64(seed).littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: Int32(size).littleEndian) { data.append(contentsOf: $0) }
        data.append(testBytes(size, seed: seed))
        return data
    }

    /// Whether `data` is a whole value as `value(seed:size:)` makes them; returns its seed.
    static func seed(ofValid data: Data) -> Int? {
        guard data.count >= 12 else { return nil }
        let bytes = [UInt8](data)
        var seed: Int64 = 0, size: Int32 = 0
        withUnsafeMutableBytes(of: &seed) { $0.copyBytes(from: bytes[0..<8]) }
        withUnsafeMutableBytes(of: &size) { $0.copyBytes(from: bytes[8..<12]) }
        guard Int(size) == data.count - 12, value(seed: Int(seed), size: Int(size)) == data else { return nil }
        return Int(seed)
    }

    /// Worker side: runs only when re-executed by the parent (`KVCACHE_PAIR_PATH` set).
    func testPairWorker() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment["KVCACHE_PAIR_PATH"], let id = environment["KVCACHE_PAIR_ID"].flatMap(Int.init)
        else { throw XCTSkip("pair worker: runs only inside testTwoProcessesShareOneFolder") }
        let cache = try DiskCache(path: path, inlineThreshold: 1_000)
        let other = 1 - id
        var rng = SplitMix64(seed: UInt64(id + 1))
        var bad = 0
        // Both workers start together, so their writes really interleave.
        emitLine("READY")
        awaitStartSignal()
        for i in 0..<Self.rounds {
            let seed = id * 1_000_000 + i
            let size = 1 + rng.next(upTo: 3_000)
            let own = "p\(id)-\(i % Self.ownKeys)"
            try cache.setObject(Self.value(seed: seed, size: size), forKey: own)
            try cache.setObject(Self.value(seed: seed, size: size / 2), forKey: "shared-\(i % 10)")
            if try cache.object(forKey: own) != Self.value(seed: seed, size: size) { bad += 1 }
            for key in ["p\(other)-\(rng.next(upTo: Self.ownKeys))", "shared-\(rng.next(upTo: 10))"] {
                if let data = try cache.object(forKey: key), Self.seed(ofValid: data) == nil { bad += 1 }
            }
            if i % 50 == 49 { try cache.trimToLimits() }
        }
        XCTAssertEqual(bad, 0)
        emitLine("WORKER \(id) BAD \(bad)")
    }

    func testTwoProcessesShareOneFolder() throws {
        let directory = try TemporaryDirectory("kvcache-pair")
        defer { try? directory.remove() }
        let workers = try (0..<2).map { id in
            try ChildProcess(test: "KVCacheTests.TwoProcessTests/testPairWorker",
                             environment: ["KVCACHE_PAIR_PATH": directory.path, "KVCACHE_PAIR_ID": "\(id)"])
        }
        for worker in workers { XCTAssertTrue(worker.waitUntilReady(timeout: 60)) }
        for worker in workers { try worker.send("go") }
        for (id, worker) in workers.enumerated() {
            let lines = worker.finish()
            XCTAssertEqual(worker.process.terminationStatus, 0, "worker \(id) failed")
            XCTAssertTrue(lines.contains("WORKER \(id) BAD 0"), "worker \(id): \(lines.suffix(5))")
        }
        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try storage._checkInvariants(), [])
        // Every key's last write survived, intact.
        for id in 0..<2 {
            for key in 0..<Self.ownKeys {
                let lastRound = Self.rounds - Self.ownKeys + key
                let data = try XCTUnwrap(storage.itemValue(forKey: "p\(id)-\(key)"), "p\(id)-\(key) lost")
                XCTAssertEqual(Self.seed(ofValid: data), id * 1_000_000 + lastRound, "p\(id)-\(key)")
            }
        }
        for key in 0..<10 {
            let data = try XCTUnwrap(storage.itemValue(forKey: "shared-\(key)"))
            XCTAssertNotNil(Self.seed(ofValid: data), "shared-\(key) corrupt")
        }
    }
}
