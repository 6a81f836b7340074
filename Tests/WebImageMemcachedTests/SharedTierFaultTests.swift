import Foundation
import TestSupport
import WebImage
import WebImageMemcached
import XCTest

/// Faults of a three-server pool under the pipeline: a server killed mid-run and restarted, a server hung
/// (SIGSTOP) and continued.
final class SharedTierFaultTests: MemcachedPoolTestCase {
    /// Fast-failing options: 100 ms timeouts, a 1 s breaker window, libmemcached's re-admission after 1 s.
    private func faultOptions() -> MemcachedTier.Options {
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 100
        options.pollTimeoutMilliseconds = 100
        options.breakerOpenMilliseconds = 1_000
        return options
    }

    func testKillingOneOfThreeMissesOnlyItsShareAndItRejoinsByItself() throws {
        // Given 60 images the first manager put in the pool.
        let tier = try MemcachedTier(servers: servers.map(\.address), options: faultOptions())
        let urls = try (0..<60).map { index -> URL in
            origin.route("/k\(index).png", .bytes(try patternPNG(seed: UInt8(index)), contentType: "image/png"))
            return origin.url("/k\(index).png")
        }
        let first = try manager("first", tier: tier)
        for url in urls { XCTAssertNil(load(url, with: first).error) }
        XCTAssertTrue(first.cache?.waitForPendingSharedWrites() ?? false)
        XCTAssertEqual(tier.statistics.stores, 60)
        let victim = servers[1]
        let onVictim = Set(urls.filter { tier.server(forKey: $0.absoluteString)?.port == UInt16(victim.port) })
        XCTAssertGreaterThan(onVictim.count, 60 / 10, "about a third of the keys live on each server")
        XCTAssertLessThan(onVictim.count, 60 * 6 / 10)

        // When that server dies and a second manager (empty disk) asks for all of them.
        victim.kill()
        let second = try manager("second", tier: tier)
        var moved: [URL] = []
        for url in urls {
            let outcome = load(url, with: second)
            XCTAssertNil(outcome.error, "no request fails: \(url)")
            let expected: ImageSource = onVictim.contains(url) ? .remote : .sharedCache
            if outcome.source != expected { moved.append(url) }
        }

        // Then exactly the dead server's share misses (and goes to the origin); nothing else moves.
        XCTAssertEqual(moved, [], "keys on the live servers stay hits; keys on the dead one miss")
        for url in urls {
            XCTAssertEqual(origin.requestCount(for: url.path), onVictim.contains(url) ? 2 : 1, url.path)
        }
        XCTAssertTrue(second.cache?.waitForPendingSharedWrites() ?? false)

        // When it restarts (empty) on the same port, the pool's handles take it back by themselves: a key of its
        // share written through the pool lands on it (checked with a tier that knows only that server).
        try victim.restart()
        let direct = try MemcachedTier(servers: [victim.address], options: relaxedOptions())
        let probeKey = try XCTUnwrap(onVictim.first).absoluteString
        let deadline = Date().addingTimeInterval(10)
        var rejoined = false
        while Date() < deadline, !rejoined {
            tier.waitSet(Data("back".utf8), forKey: probeKey)
            rejoined = direct.waitValue(forKey: probeKey) == Data("back".utf8)
            if !rejoined { usleep(100_000) }
        }
        XCTAssertTrue(rejoined, "the restarted server serves its share again within 10 s")
        print(String(format: "kill one of three: %d of 60 keys on it missed, all others hit; rejoined %.2f s after restart",
                     onVictim.count, 10 - deadline.timeIntervalSinceNow))
        XCTAssertEqual(tier.server(forKey: probeKey)?.port, UInt16(victim.port))
    }

    func testAHungServerCostsAtMostItsTimeoutThenItsBreakerOpensAndClosesAfterSIGCONT() throws {
        let options = faultOptions()
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let keys = (0..<60).map { "hung-\($0)" }
        for key in keys { XCTAssertTrue(tier.waitSet(payload(for: key, size: 2_000), forKey: key)) }
        let victimIndex = 2
        let victim = servers[victimIndex]
        let onVictim = Set(keys.filter { tier.server(forKey: $0)?.port == UInt16(victim.port) })
        XCTAssertFalse(onVictim.isEmpty)

        // When the server hangs (SIGSTOP: the kernel still accepts connections; nothing answers).
        victim.suspend()
        let bound = Double(options.connectTimeoutMilliseconds + 3 * options.pollTimeoutMilliseconds) / 1_000 + 0.3
        var slow = 0
        var slowest = 0.0
        let started = Date()
        for key in keys {
            let start = Date()
            let value = tier.waitValue(forKey: key)
            let seconds = Date().timeIntervalSince(start)
            // Then each lookup stays within the configured timeouts (a correctness bound, with slack for a
            // loaded machine), keys elsewhere still hit, the hung server's keys miss.
            XCTAssertLessThan(seconds, bound, "lookup of \(key) took \(seconds) s")
            // A lookup that waited for the poll timeout (timeouts only happen on the hung server's keys).
            if onVictim.contains(key), seconds >= Double(options.pollTimeoutMilliseconds) / 1_000 { slow += 1 }
            slowest = max(slowest, seconds)
            if onVictim.contains(key) { XCTAssertNil(value, key) } else { XCTAssertEqual(value, payload(for: key, size: 2_000), key) }
        }
        let state = tier.serverStates[victimIndex]
        XCTAssertTrue(state.isBreakerOpen, "a timeout opens the server's breaker")
        XCTAssertGreaterThanOrEqual(tier.statistics.timeouts, 1)
        // One timeout per breaker window (the first, then one probe per window that passed): the breaker spares
        // the hung server's other keys the wait.
        let windows = 1 + Int(Date().timeIntervalSince(started) * 1_000) / options.breakerOpenMilliseconds
        XCTAssertGreaterThanOrEqual(slow, 1)
        XCTAssertLessThanOrEqual(slow, windows, "\(onVictim.count) keys on the hung server, \(windows) breaker window(s)")
        XCTAssertFalse(tier.serverStates[0].isBreakerOpen || tier.serverStates[1].isBreakerOpen)

        // When it continues, a probe after the window finds it and the breaker closes.
        victim.resume()
        let probe = try XCTUnwrap(onVictim.first)
        let deadline = Date().addingTimeInterval(10)
        var back = false
        while Date() < deadline, !back {
            back = tier.waitValue(forKey: probe) == payload(for: probe, size: 2_000)
            if !back { usleep(100_000) }
        }
        XCTAssertTrue(back, "the continued server serves its keys again")
        print(String(format: "SIGSTOP one of three: %d slow lookup(s) of 60 (slowest %.0f ms, poll timeout %d ms), breaker closed %.2f s after SIGCONT",
                     slow, slowest * 1e3, options.pollTimeoutMilliseconds, 10 - deadline.timeIntervalSinceNow))
        XCTAssertFalse(tier.serverStates[victimIndex].isBreakerOpen)
        XCTAssertGreaterThanOrEqual(tier.serverStates[victimIndex].breakerOpenings, 1)
    }
}
