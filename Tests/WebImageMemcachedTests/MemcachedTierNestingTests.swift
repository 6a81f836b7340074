import Foundation
import KVCache
import Synchronization
import TestSupport
import WebImageMemcached
import XCTest

/// Completions that call the tier again: past the inline nesting limit, a call made from a completion runs
/// after the outermost completion returns — still on the calling thread, in order, before the outermost call
/// returns (so a chain of any length uses bounded stack and keeps the documented inline behaviour).
final class MemcachedTierNestingTests: XCTestCase {
    private var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
    }

    /// Each step checks where its completion ran, then asks for the next key from inside it.
    private final class Chain: Sendable {
        let tier: MemcachedTier
        let thread = pthread_self()
        let returned = Atomic<Bool>(false)
        let steps = Mutex<[(step: Int, inline: Bool, hit: Bool)]>([])

        init(tier: MemcachedTier) { self.tier = tier }

        func step(_ index: Int, of count: Int) {
            let key = "chain-\(index % 4)"
            tier.value(forKey: key) { [self] data in
                let inline = !returned.load(ordering: .sequentiallyConsistent) && pthread_equal(thread, pthread_self()) != 0
                steps.withLock { $0.append((index, inline, data == payload(for: key, size: 64))) }
                if index + 1 < count { step(index + 1, of: count) }
            }
        }
    }

    func testAChainDeeperThanTheNestingLimitCompletesInOrderOnTheCallingThreadBeforeTheCallReturns() throws {
        servers = try startMemcached(1)
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        for index in 0..<4 { XCTAssertTrue(tier.waitSet(payload(for: "chain-\(index)", size: 64), forKey: "chain-\(index)")) }
        let count = 200
        let finished = expectation(description: "the chain ran")
        let chainBox = Mutex<Chain?>(nil)
        // From another thread (its own stack), so a hang fails the wait below instead of hanging the test.
        DispatchQueue.global().async {
            let chain = Chain(tier: tier)
            chain.step(0, of: count)
            chain.returned.store(true, ordering: .sequentiallyConsistent)
            chainBox.withLock { $0 = chain }
            finished.fulfill()
        }
        wait(for: [finished], timeout: 30)
        let steps = try XCTUnwrap(chainBox.withLock { $0 }).steps.withLock { $0 }
        XCTAssertEqual(steps.map(\.step), Array(0..<count), "every step completed once, in order, before the call returned")
        XCTAssertEqual(steps.filter { !$0.inline }.map(\.step), [], "steps whose completion ran elsewhere or later")
        XCTAssertEqual(steps.filter { !$0.hit }.map(\.step), [], "steps that missed a stored key")
    }
}
