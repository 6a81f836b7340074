import Foundation
import TestSupport
import Synchronization
import WebImage
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
        let nestedStarted = Atomic<Int>(0)
        let nestedCompletions = Atomic<Int>(0)
        let wrongValues = Mutex<[String]>([])
        let finished = hammer(threads: threads, operationsPerThread: operationsPerThread, seed: seed) { random, done in
            let key = keys[random.next(upTo: keys.count)]
            switch random.next(upTo: 4) {
            case 0:
                tier.value(forKey: key) { data in
                    if let data, data != value(key) { wrongValues.withLock { $0.append(key) } }
                    completions.add(1, ordering: .relaxed)
                    guard data == nil else { return done.leave() }
                    // A miss fills its key from inside the completion: the tier re-entered on the completion's
                    // thread (inline when a connection is free, else queued).
                    nestedStarted.add(1, ordering: .relaxed)
                    tier.setValue(value(key), forKey: key, timeToLive: nil) { _ in
                        nestedCompletions.add(1, ordering: .relaxed)
                        done.leave()
                    }
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
        XCTAssertTrue(finished, "seed \(seed): operations did not all complete")
        XCTAssertEqual(completions.load(ordering: .relaxed), threads * operationsPerThread, "seed \(seed)")
        XCTAssertGreaterThan(nestedStarted.load(ordering: .relaxed), 0, "seed \(seed): no miss re-entered the tier")
        XCTAssertEqual(nestedCompletions.load(ordering: .relaxed), nestedStarted.load(ordering: .relaxed), "seed \(seed)")
        XCTAssertEqual(wrongValues.withLock { $0 }, [], "seed \(seed): a hit returned another key's value")
        let stats = tier.statistics
        XCTAssertEqual(stats.errors, 0, "seed \(seed)")
        XCTAssertEqual(stats.hits + stats.misses, stats.lookups, "seed \(seed)")
    }

    /// Two managers with their own disk folders share one tier; many threads request random images through
    /// either, with random cancels: every request completes exactly once, and every image that completes is
    /// the one served for its URL (whichever level it came from).
    func testTwoManagersShareOneTierFromManyThreads() throws {
        let servers: [MemcachedProcess]
        do { servers = try MemcachedPool.start(2) } catch let error as MemcachedProcess.NotInstalled {
            throw XCTSkip(error.description)
        }
        defer { for server in servers { server.kill() } }
        let origin = try HTTPTestServer.start()
        defer { origin.shutdown() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-stress-mc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 2_000
        options.pollTimeoutMilliseconds = 2_000
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let urls = try (0..<24).map { index -> URL in
            var encoder = ImageEncoder(format: .png)
            encoder.addFrame(try PixelBuffer(width: 4 + index, height: 4))
            origin.route("/s\(index).png", .bytes(try encoder.encode(), contentType: "image/png"))
            return origin.url("/s\(index).png")
        }
        let managers = try (0..<2).map { index in
            ImageManager(cache: try ImageCache(path: folder.appendingPathComponent("m\(index)").path, sharedTier: tier),
                         queue: FetchQueue(maxConcurrentTransfers: 4))
        }
        let seed = ProcessInfo.processInfo.environment["WEBIMAGE_STRESS_SEED"].flatMap(UInt64.init) ?? 0x5eed_17
        let threads = 6, requestsPerThread = 40
        let completions = Atomic<Int>(0)
        let wrong = Mutex<[String]>([])
        let finished = hammer(threads: threads, operationsPerThread: requestsPerThread, seed: seed) { random, done in
            let index = random.next(upTo: urls.count)
            let manager = managers[random.next(upTo: managers.count)]
            let operation = manager.requestImage(url: urls[index]) { image, _, _, stage, _ in
                guard stage != .progress else { return }
                if stage == .finished, let image, image.width != 4 + index { wrong.withLock { $0.append("\(index)") } }
                completions.add(1, ordering: .relaxed)
                done.leave()
            }
            if random.next(upTo: 6) == 0 { operation.cancel() }
        }
        XCTAssertTrue(finished, "seed \(seed): requests did not all complete")
        XCTAssertEqual(completions.load(ordering: .relaxed), threads * requestsPerThread, "seed \(seed)")
        XCTAssertEqual(wrong.withLock { $0 }, [], "seed \(seed): an image of another URL")
        for manager in managers { manager.cache?.waitForPendingSharedWrites() }
        XCTAssertEqual(tier.statistics.errors, 0, "seed \(seed)")
    }

    /// Runs `operation` `operationsPerThread` times on each of `threads` threads, each with its own generator
    /// seeded from `seed`; `done` has been entered for each call, and the call's completion leaves it. Returns
    /// whether every completion came within 120 s.
    private func hammer(threads: Int, operationsPerThread: Int, seed: UInt64,
                        _ operation: @escaping @Sendable (inout SplitMix64, DispatchGroup) -> Void) -> Bool {
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                var random = SplitMix64(seed: seed &+ UInt64(thread))
                let done = DispatchGroup()
                for _ in 0..<operationsPerThread {
                    done.enter()
                    operation(&random, done)
                }
                done.wait()
                group.leave()
            }
        }
        return group.wait(timeout: .now() + 120) == .success
    }
}
