import Foundation
import KVCache
import Synchronization
import TestSupport
import WebImageMemcached
import XCTest

/// The tier's inline path: with a connection free, an operation runs on the calling thread and its completion
/// runs there before the call returns, holding no lock (so it may call the tier again); a hung server reached
/// that way holds the caller for at most the poll timeout and opens its breaker.
final class MemcachedTierInlineTests: MemcachedServerTestCase {
    /// Where a completion ran: on the calling thread before the call returned, or elsewhere (later).
    private final class Probe: Sendable {
        private let thread = pthread_self()
        private let returned = Atomic<Bool>(false)
        private let inline = Mutex<[Bool]>([])

        func callReturned() { returned.store(true, ordering: .sequentiallyConsistent) }

        func completed() {
            let here = !returned.load(ordering: .sequentiallyConsistent) && pthread_equal(thread, pthread_self()) != 0
            inline.withLock { $0.append(here) }
        }

        var completions: [Bool] { inline.withLock { $0 } }
    }

    func testEachOperationOnAnIdleTierCompletesOnTheCallingThreadBeforeItReturns() throws {
        servers = try startMemcached(1)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        let value = payload(for: "inline", size: 50 * 1_024)
        let results = Mutex<[String]>([])

        let probe = Probe()
        tier.setValue(value, forKey: "inline", timeToLive: nil) { stored in
            probe.completed()
            results.withLock { $0.append("set \(stored)") }
        }
        tier.value(forKey: "inline") { data in
            probe.completed()
            results.withLock { $0.append("get \(data == value)") }
        }
        tier.values(forKeys: ["inline", "absent"]) { found in
            probe.completed()
            results.withLock { $0.append("mget \(found.foundKeys.sorted()) \(found["inline"] == value)") }
        }
        tier.removeValue(forKey: "inline") { answered in
            probe.completed()
            results.withLock { $0.append("remove \(answered)") }
        }
        tier.value(forKey: "inline") { data in
            probe.completed()
            results.withLock { $0.append("get \(data == nil ? "miss" : "hit")") }
        }
        probe.callReturned()

        XCTAssertEqual(probe.completions, [true, true, true, true, true], "every completion ran inside its call")
        XCTAssertEqual(results.withLock { $0 }, ["set true", "get true", "mget [\"inline\"] true", "remove true", "get miss"])
    }

    func testACompletionMayCallTheTierAgainOnItsOwnThread() throws {
        servers = try startMemcached(1)
        var options = relaxedOptions()
        options.connections = 1 // the one handle: a completion run under its lock could not use it inline
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        XCTAssertTrue(tier.waitSet(Data("outer".utf8), forKey: "outer"))
        let steps = Mutex<[String]>([])
        let done = expectation(description: "the nested calls complete")

        // From another thread, so a deadlock fails the wait below instead of hanging the test.
        DispatchQueue.global().async {
            let outer = Probe()
            tier.value(forKey: "outer") { data in
                outer.completed()
                steps.withLock { $0.append("outer get \(data.map { String(decoding: $0, as: UTF8.self) } ?? "nil")") }
                // A set and a get from inside the completion, on its thread: the handle is free again.
                let inner = Probe()
                tier.setValue(Data("inner".utf8), forKey: "inner", timeToLive: nil) { stored in
                    inner.completed()
                    steps.withLock { $0.append("inner set \(stored)") }
                }
                tier.value(forKey: "inner") { data in
                    inner.completed()
                    steps.withLock { $0.append("inner get \(data.map { String(decoding: $0, as: UTF8.self) } ?? "nil")") }
                }
                // A call that waits for a handle: it must not wait for the one this completion came from.
                let server = tier.server(forKey: "inner")
                inner.callReturned()
                steps.withLock { $0.append("server \(server?.port ?? 0)") }
                steps.withLock { $0.append("inner inline \(inner.completions)") }
            }
            outer.callReturned()
            steps.withLock { $0.append("outer inline \(outer.completions)") }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(steps.withLock { $0 }, [
            "outer get outer", "inner set true", "inner get inner", "server \(servers[0].port)",
            "inner inline [true, true]", "outer inline [true]",
        ])
        XCTAssertEqual(tier.statistics.errors, 0)
    }

    func testAHungServerReachedFromTheCallingThreadCostsAtMostItsTimeoutAndOpensItsBreaker() throws {
        servers = try startMemcached(1)
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 100
        options.pollTimeoutMilliseconds = 100
        options.breakerOpenMilliseconds = 60_000 // one window for the whole test
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        XCTAssertTrue(tier.waitSet(Data("hung".utf8), forKey: "hung"))
        XCTAssertEqual(tier.waitValue(forKey: "hung"), Data("hung".utf8), "the connection is up before the hang")

        // When the server hangs (SIGSTOP: the kernel still accepts; nothing answers).
        servers[0].suspend()
        let bound = Double(options.connectTimeoutMilliseconds + 3 * options.pollTimeoutMilliseconds) / 1_000 + 0.5
        var durations: [Double] = []
        var inline: [Bool] = []
        for _ in 0..<5 {
            let probe = Probe()
            let answer = Mutex<Data?>(Data())
            let start = Date()
            tier.value(forKey: "hung") { data in
                probe.completed()
                answer.withLock { $0 = data }
            }
            probe.callReturned()
            durations.append(Date().timeIntervalSince(start))
            inline += probe.completions
            XCTAssertNil(answer.withLock { $0 }, "a hung server's key is a miss")
        }
        // Then each lookup returned (its completion inside the call) within the timeouts, the first one timed
        // out and opened the breaker, the others were misses at once without a request.
        XCTAssertEqual(inline, [true, true, true, true, true])
        for (index, seconds) in durations.enumerated() {
            XCTAssertLessThan(seconds, bound, "lookup \(index) held the caller \(seconds) s")
        }
        XCTAssertTrue(tier.serverStates[0].isBreakerOpen)
        XCTAssertEqual(tier.serverStates[0].breakerOpenings, 1)
        let stats = tier.statistics
        XCTAssertEqual(stats.timeouts, 1, "one timeout per breaker window")
        XCTAssertEqual(stats.skippedUnavailable, 4)
        XCTAssertEqual(stats.misses, 5)
        print(String(format: "SIGSTOP, inline lookups: first %.0f ms (poll timeout %d ms), then %.3f ms max",
                     durations[0] * 1e3, options.pollTimeoutMilliseconds, (durations.dropFirst().max() ?? 0) * 1e3))
    }
}
