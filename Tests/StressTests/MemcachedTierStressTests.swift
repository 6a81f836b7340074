import Foundation
import TestSupport
import Synchronization
import WebImageMemcached
import XCTest

/// Many threads sharing one `MemcachedTier` (run under ThreadSanitizer by `make test-stress`): random gets,
/// multi-gets, sets and removes over a small key space on two real servers. Every hit must be the one value
/// ever written for its key, every operation completes exactly once, and the counters add up.
final class MemcachedTierStressTests: XCTestCase {
    func testManyThreadsShareOneTier() throws {
        let servers: [MemcachedProcess]
        do { servers = try MemcachedPool.start(2) } catch let error as MemcachedProcess.NotInstalled {
            throw XCTSkip(error.description)
        }
        defer { for server in servers { server.kill() } }
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 2_000 // ThreadSanitizer slows everything down: no false timeouts
        options.pollTimeoutMilliseconds = 2_000
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let seed = ProcessInfo.processInfo.environment["WEBIMAGE_STRESS_SEED"].flatMap(UInt64.init) ?? 0x5eed_16
        let keys = (0..<48).map { "stress-\($0)" }
        @Sendable func value(_ key: String) -> Data { Data((key + String(repeating: "·", count: 200)).utf8) }

        let threads = 8, operationsPerThread = 150
        let completions = Atomic<Int>(0)
        let wrongValues = Mutex<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                var random = SplitMix64(seed: seed &+ UInt64(thread))
                let done = DispatchGroup()
                for _ in 0..<operationsPerThread {
                    let key = keys[random.next(upTo: keys.count)]
                    done.enter()
                    switch random.next(upTo: 4) {
                    case 0:
                        tier.value(forKey: key) { data in
                            if let data, data != value(key) { wrongValues.withLock { $0.append(key) } }
                            completions.add(1, ordering: .relaxed)
                            done.leave()
                        }
                    case 1:
                        let some = (0..<4).map { _ in keys[random.next(upTo: keys.count)] }
                        tier.values(forKeys: some) { found in
                            for (k, data) in found where data != value(k) { wrongValues.withLock { $0.append(k) } }
                            completions.add(1, ordering: .relaxed)
                            done.leave()
                        }
                    case 2:
                        tier.setValue(value(key), forKey: key, timeToLive: nil) { _ in
                            completions.add(1, ordering: .relaxed)
                            done.leave()
                        }
                    default:
                        tier.removeValue(forKey: key) { _ in
                            completions.add(1, ordering: .relaxed)
                            done.leave()
                        }
                    }
                    if random.next(upTo: 8) == 0 { _ = tier.statistics; _ = tier.serverStates }
                }
                done.wait()
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "seed \(seed): operations did not all complete")
        XCTAssertEqual(completions.load(ordering: .relaxed), threads * operationsPerThread, "seed \(seed)")
        XCTAssertEqual(wrongValues.withLock { $0 }, [], "seed \(seed): a hit returned another key's value")
        let stats = tier.statistics
        XCTAssertEqual(stats.errors, 0, "seed \(seed)")
        XCTAssertEqual(stats.hits + stats.misses, stats.lookups, "seed \(seed)")
    }
}
