@testable import KVCache
import Synchronization
import XCTest

final class MemoryCacheTests: XCTestCase {
    private func makeCache(_ clock: FakeClock = FakeClock()) -> MemoryCache<String, Int> {
        let cache = MemoryCache<String, Int>(name: "test", clock: { clock.now })
        cache.releasesAsynchronously = false
        return cache
    }

    private func assertInvariants(_ cache: MemoryCache<String, Int>, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(cache._checkInvariants(), file: file, line: line)
    }

    func testSetGetRemoveAndTotals() {
        let cache = makeCache()
        cache.setObject(1, forKey: "a", cost: 10)
        cache.setObject(2, forKey: "b", cost: 5)
        XCTAssertEqual(cache.object(forKey: "a"), 1)
        XCTAssertEqual(cache.totalCount, 2)
        XCTAssertEqual(cache.totalCost, 15)
        cache.setObject(3, forKey: "a", cost: 1)
        XCTAssertEqual(cache.object(forKey: "a"), 3)
        XCTAssertEqual(cache.totalCost, 6)
        cache.removeObject(forKey: "a")
        XCTAssertFalse(cache.containsObject(forKey: "a"))
        XCTAssertTrue(cache.containsObject(forKey: "b"))
        cache.setObject(nil, forKey: "b")
        XCTAssertEqual(cache.totalCount, 0)
        XCTAssertEqual(cache.totalCost, 0)
        assertInvariants(cache)
    }

    func testGetMovesToHeadButContainsDoesNot() {
        let cache = makeCache()
        for (i, key) in ["a", "b", "c"].enumerated() { cache.setObject(i, forKey: key) }
        XCTAssertEqual(cache._keysInLRUOrder(), ["c", "b", "a"])
        _ = cache.containsObject(forKey: "a")
        XCTAssertEqual(cache._keysInLRUOrder(), ["c", "b", "a"])
        _ = cache.object(forKey: "a")
        XCTAssertEqual(cache._keysInLRUOrder(), ["a", "c", "b"])
        assertInvariants(cache)
    }

    func testCountLimitEvictsLeastRecentlyUsedOnSet() {
        let cache = makeCache()
        cache.countLimit = 2
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        _ = cache.object(forKey: "a")
        cache.setObject(3, forKey: "c")
        XCTAssertEqual(Set(cache._keysInLRUOrder()), ["a", "c"])
        assertInvariants(cache)
    }

    func testCostLimitEvictsUntilUnderAndOversizedItemIsNotKept() {
        let cache = makeCache()
        cache.costLimit = 10
        cache.setObject(1, forKey: "a", cost: 4)
        cache.setObject(2, forKey: "b", cost: 4)
        cache.setObject(3, forKey: "c", cost: 4)
        XCTAssertEqual(cache._keysInLRUOrder(), ["c", "b"])
        XCTAssertEqual(cache.totalCost, 8)
        cache.setObject(4, forKey: "huge", cost: 11)
        XCTAssertEqual(cache.totalCount, 0)
        assertInvariants(cache)
    }

    func testTrimToCountCostAge() {
        let clock = FakeClock()
        let cache = makeCache(clock)
        for i in 0..<10 {
            cache.setObject(i, forKey: "k\(i)", cost: 1)
            clock.advance(by: 1)
        }
        cache.trim(toCount: 8)
        XCTAssertEqual(cache.totalCount, 8)
        XCTAssertFalse(cache.containsObject(forKey: "k1"))
        cache.trim(toCost: 5)
        XCTAssertEqual(cache.totalCost, 5)
        XCTAssertTrue(cache.containsObject(forKey: "k5"))
        // Now = 1010; k5 was set at 1005, k9 at 1009.
        cache.trim(toAge: 2.5)
        XCTAssertEqual(cache._keysInLRUOrder(), ["k9", "k8"])
        cache.trim(toCount: 0)
        XCTAssertEqual(cache.totalCount, 0)
        assertInvariants(cache)
    }

    func testMemoryWarningRemovesAllAndCallsBack() {
        let cache = makeCache()
        cache.setObject(1, forKey: "a")
        let calls = Mutex(0)
        cache.didReceiveMemoryWarning = { _ in calls.withLock { $0 += 1 } }
        cache.handleMemoryWarning()
        XCTAssertEqual(cache.totalCount, 0)
        XCTAssertEqual(calls.withLock { $0 }, 1)
        cache.removesAllObjectsOnMemoryWarning = false
        cache.setObject(1, forKey: "a")
        cache.handleMemoryWarning()
        XCTAssertEqual(cache.totalCount, 1)
        XCTAssertEqual(calls.withLock { $0 }, 2)
    }

    /// One background sweep enforces all three limits (the timer only calls `autoTrim()` periodically).
    func testAutoTrimSweepEnforcesCostCountAndAge() {
        let clock = FakeClock()
        let cache = makeCache(clock)
        for i in 0..<10 { cache.setObject(i, forKey: "k\(i)", cost: 10) }
        clock.advance(by: 20)
        cache.setObject(10, forKey: "fresh", cost: 10)
        cache.state.withLock { $0.costLimit = 100; $0.countLimit = 8; $0.ageLimit = 10 }
        cache.autoTrim()
        XCTAssertEqual(cache._keysInLRUOrder(), ["fresh"])
        assertInvariants(cache)
    }

    /// A million nodes are freed without recursion (the list links are unowned; the dictionary owns).
    func testFreeingAMillionNodesDoesNotRecurse() {
        var cache: MemoryCache<Int, Int>? = MemoryCache<Int, Int>()
        cache?.releasesAsynchronously = false
        for i in 0..<1_000_000 { cache?.setObject(i, forKey: i) }
        XCTAssertEqual(cache?.totalCount, 1_000_000)
        cache?.removeAllObjects()
        XCTAssertEqual(cache?.totalCount, 0)
        for i in 0..<1_000_000 { cache?.setObject(i, forKey: i) }
        cache = nil
        XCTAssertNil(cache)
    }

    func testAsynchronousReleaseFreesEvictedValuesOffTheLock() {
        final class Tracked: Sendable {
            let onDeinit: @Sendable () -> Void
            init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let cache = MemoryCache<Int, Tracked>()
        cache.countLimit = 1
        let freed = expectation(description: "evicted value freed")
        cache.setObject(Tracked { freed.fulfill() }, forKey: 1)
        cache.setObject(Tracked {}, forKey: 2)
        wait(for: [freed], timeout: 5)
        XCTAssertEqual(cache.totalCount, 1)
    }
}
