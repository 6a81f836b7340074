import Foundation
@testable import KVCache
import Synchronization
import XCTest

/// 4+ threads hammer each cache with random operations. Run under ThreadSanitizer by `make test`.
/// Each test is bounded by an operation count (a few seconds under TSan).
final class KVCacheStressTests: XCTestCase {
    private let threads = 6

    func testMemoryCacheRandomOperationsFromManyThreads() {
        let cache = MemoryCache<Int, [UInt8]>(name: "stress")
        cache.countLimit = 300
        cache.costLimit = 40_000
        cache.autoTrimInterval = 0.01
        let wrongValues = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var rng = SystemRandomNumberGenerator()
            for op in 0..<20_000 {
                let key = Int.random(in: 0..<500, using: &rng)
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<45:
                    if let value = cache.object(forKey: key), value.first != UInt8(truncatingIfNeeded: key) {
                        wrongValues.add(1, ordering: .relaxed)
                    }
                case 45..<85:
                    let size = Int.random(in: 1..<300, using: &rng)
                    cache.setObject([UInt8](repeating: UInt8(truncatingIfNeeded: key), count: size), forKey: key, cost: size)
                case 85..<92: cache.removeObject(forKey: key)
                case 92..<96: _ = cache.containsObject(forKey: key)
                case 96: cache.trim(toCount: 200)
                case 97: cache.trim(toCost: 20_000)
                case 98: cache.trim(toAge: 0.05)
                default:
                    if op % 1_000 == thread { cache.removeAllObjects() } else { _ = cache.totalCost }
                }
            }
        }
        XCTAssertEqual(wrongValues.load(ordering: .relaxed), 0)
        XCTAssertLessThanOrEqual(cache.totalCount, 300)
        XCTAssertLessThanOrEqual(cache.totalCost, 40_000)
        XCTAssertNil(cache._checkInvariants())
    }
}
