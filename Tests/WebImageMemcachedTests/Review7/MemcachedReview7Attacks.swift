import Foundation
import KVCache
import Synchronization
import TestSupport
import WebImageMemcached
import XCTest

/// Review 7 (held): a multi-get against three servers, two of them SIGSTOPped, waits at most one poll timeout
/// per hung server (one `memcached_mget` per server, one after the other), finds every key of the live
/// server, completes once, and the next multi-get (both breakers open) does not wait.
final class MemcachedMultiGetTwoHungServersReviewTests: MemcachedServerTestCase {
    func testEachHungServerCostsOneTimeoutAndTheLiveOneAnswers() throws {
        servers = try startMemcached(3)
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 200
        options.pollTimeoutMilliseconds = 200
        options.breakerOpenMilliseconds = 60_000
        options.connections = 1
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let keys = (0..<60).map { "hung2-\($0)" }
        for key in keys { XCTAssertTrue(tier.waitSet(payload(for: key, size: 200), forKey: key)) }
        let live = keys.filter { tier.server(forKey: $0).map { Int($0.port) } == servers[0].port }
        XCTAssertFalse(live.isEmpty)
        servers[1].suspend()
        servers[2].suspend()

        let calls = Atomic(0)
        let start = Date()
        let found = waitFor("multi-get", timeout: 10, initial: RemoteCacheValues.misses(keys)) { done in
            tier.values(forKeys: keys) { result in
                calls.add(1, ordering: .relaxed)
                done(result)
            }
        }
        let first = Date().timeIntervalSince(start)
        XCTAssertEqual(calls.load(ordering: .relaxed), 1)
        for key in live { XCTAssertEqual(found[key], payload(for: key, size: 200), key) }
        XCTAssertEqual(found.values.count, keys.count)
        // Two hung servers: two poll timeouts (0.4 s), plus slack for a loaded machine.
        XCTAssertLessThan(first, 0.4 + 0.6, "a multi-get with 2 hung servers took \(first) s")
        let again = Date()
        let second = tier.waitValues(forKeys: keys)
        XCTAssertLessThan(Date().timeIntervalSince(again), 0.15, "the breakers did not open: \(tier.serverStates)")
        for key in live { XCTAssertEqual(second[key], payload(for: key, size: 200), key) }
    }
}

/// Review 7 (held): two tiers whose completions call each other on one thread, 60 steps deep (past
/// `InlineNesting.limit`): the thread-local nesting is shared, so one tier's deferred calls drain in the
/// other's outermost call — every completion runs exactly once, in chain order, on the calling thread,
/// before the outermost call returns, with the right value.
final class MemcachedCrossTierNestingReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    private final class Chain: @unchecked Sendable {
        // Touched only by the test thread (every completion runs there, checked below).
        var steps: [Int] = []
        var wrong: [Int] = []
        var offThread = 0
        let thread = pthread_self()
        let tiers: [MemcachedTier]
        let length: Int
        init(tiers: [MemcachedTier], length: Int) {
            self.tiers = tiers
            self.length = length
        }

        func step(_ n: Int) {
            guard n < length else { return }
            tiers[n % 2].value(forKey: "step-\(n)") { [self] data in
                if pthread_equal(thread, pthread_self()) == 0 { offThread += 1 }
                steps.append(n)
                if data != Data("value-\(n)".utf8) { wrong.append(n) }
                step(n + 1)
            }
        }
    }

    func testTwoTiersNestingIntoEachOtherCompleteOnceInOrder() throws {
        servers = try startMemcached(2)
        let a = try MemcachedTier(servers: [servers[0].address], options: relaxedOptions())
        var other = relaxedOptions()
        other.keys = try XCTUnwrap(RemoteCacheKey(namespace: "other"))
        let b = try MemcachedTier(servers: [servers[1].address], options: other)
        let length = 60
        for n in 0..<length { XCTAssertTrue((n % 2 == 0 ? a : b).waitSet(Data("value-\(n)".utf8), forKey: "step-\(n)")) }
        let chain = Chain(tiers: [a, b], length: length)
        chain.step(0)
        XCTAssertEqual(chain.steps, Array(0..<length), "completions missing, doubled or out of order")
        XCTAssertEqual(chain.wrong, [])
        XCTAssertEqual(chain.offThread, 0)
    }
}

/// Review 7 (held): `values(forKeys:)` with no key, one key, a key asked twice, keys with NUL bytes and two
/// canonically equal keys: aligned, byte-exact, one completion each.
final class MemcachedMultiGetKeyEdgesReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    func testEdgeKeys() throws {
        servers = try startMemcached(2)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}", nul = "a\u{0}b", nulShort = "a"
        XCTAssertTrue(tier.waitSet(Data("composed".utf8), forKey: composed))
        XCTAssertTrue(tier.waitSet(Data("nul".utf8), forKey: nul))
        let calls = Atomic(0)
        let none = waitFor("empty", initial: RemoteCacheValues.misses(["x"])) { done in
            tier.values(forKeys: []) { calls.add(1, ordering: .relaxed); done($0) }
        }
        XCTAssertEqual(none.requestedKeys, [])
        XCTAssertEqual(none.count, 0)
        let keys = [decomposed, composed, nulShort, nul, composed, "absent"]
        let found = waitFor("edges", initial: RemoteCacheValues.misses([])) { done in
            tier.values(forKeys: keys) { calls.add(1, ordering: .relaxed); done($0) }
        }
        XCTAssertEqual(calls.load(ordering: .relaxed), 2)
        XCTAssertEqual(found.requestedKeys.map { Array($0.utf8) }, keys.map { Array($0.utf8) })
        XCTAssertEqual(found.values, [nil, Data("composed".utf8), nil, Data("nul".utf8), Data("composed".utf8), nil])
        XCTAssertNil(found[decomposed])
        XCTAssertNil(found[nulShort])
        XCTAssertEqual(found[nul], Data("nul".utf8))
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.foundKeys.map { Array($0.utf8) }, [composed, nul].map { Array($0.utf8) })
        XCTAssertEqual(tier.waitValues(forKeys: [nul]).values, [Data("nul".utf8)])
    }
}

/// Review 7 (held): chains past `InlineNesting.limit` on 6 threads at once against a tier of 2 connections —
/// inline nesting, the trampoline and the queued path (every handle busy: the completion runs on a lane's
/// queue and the chain goes on from there) mixed. Every step completes exactly once, in chain order, with
/// its value; and a tier whose only lasting references are its chain's (the caller's ends with its scope) is
/// freed once the chain ends, every step answered.
final class MemcachedNestingUnderLoadReviewTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    private final class Walk: @unchecked Sendable {
        // Appended to by one chain at a time (each step starts from the previous step's completion).
        private let log = Mutex<[Int]>([])
        private let wrong = Mutex<[Int]>([])
        let length: Int
        let done: XCTestExpectation
        init(length: Int, done: XCTestExpectation) {
            self.length = length
            self.done = done
        }

        func step(_ tier: MemcachedTier, _ n: Int, prefix: String) {
            tier.value(forKey: "\(prefix)-\(n % 10)") { [self] data in
                log.withLock { $0.append(n) }
                if data != Data("v-\(n % 10)".utf8) { wrong.withLock { $0.append(n) } }
                if n + 1 < length { step(tier, n + 1, prefix: prefix) } else { done.fulfill() }
            }
        }

        var steps: [Int] { log.withLock { $0 } }
        var mismatches: [Int] { wrong.withLock { $0 } }
    }

    func testChainsOnManyThreadsWithBusyHandlesCompleteOnceInOrder() throws {
        servers = try startMemcached(1)
        var options = relaxedOptions()
        options.connections = 2
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        for k in 0..<10 { XCTAssertTrue(tier.waitSet(Data("v-\(k)".utf8), forKey: "w-\(k)")) }
        let walks = (0..<6).map { i in Walk(length: 40, done: expectation(description: "walk \(i)")) }
        DispatchQueue.concurrentPerform(iterations: walks.count) { i in walks[i].step(tier, 0, prefix: "w") }
        wait(for: walks.map(\.done), timeout: 15)
        for (i, walk) in walks.enumerated() {
            XCTAssertEqual(walk.steps, Array(0..<40), "walk \(i): steps missing, doubled or out of order")
            XCTAssertEqual(walk.mismatches, [], "walk \(i)")
        }
    }

    func testATierDroppedInsideANestedCompletionFinishesTheChain() throws {
        servers = try startMemcached(1)
        let done = expectation(description: "the chain ends")
        let walk = Walk(length: 30, done: done)
        weak var gone: MemcachedTier?
        do {
            let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
            for k in 0..<10 { XCTAssertTrue(tier.waitSet(Data("v-\(k)".utf8), forKey: "d-\(k)")) }
            gone = tier
            walk.step(tier, 0, prefix: "d")
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(walk.steps, Array(0..<30))
        XCTAssertEqual(walk.mismatches, [])
        XCTAssertNil(gone, "the tier outlived its chain")
    }
}
