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

extension KVCacheStressTests {
    private func makeDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kvstress-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// A value that says which key and version it is, so a reader can tell a torn or mixed-up value.
    private static func value(key: Int, version: Int, size: Int) -> Data {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: key &+ version), count: size)
        bytes[0] = UInt8(truncatingIfNeeded: key)
        return Data(bytes)
    }

    private static func isValid(_ data: Data, key: Int) -> Bool {
        guard let first = data.first, first == UInt8(truncatingIfNeeded: key), data.count > 1 else { return false }
        let fill = data[data.startIndex + 1]
        return data.dropFirst().allSatisfy { $0 == fill }
    }

    func testDiskCacheRandomOperationsFromManyThreads() throws {
        let path = try makeDirectory()
        let cache = try DiskCache(path: path, inlineThreshold: 2_000)
        cache.countLimit = 150
        cache.autoTrimInterval = 0.05
        let problems = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var rng = SystemRandomNumberGenerator()
            for op in 0..<400 {
                let key = Int.random(in: 0..<200, using: &rng)
                do {
                    switch Int.random(in: 0..<100, using: &rng) {
                    case 0..<40:
                        if let data = try cache.object(forKey: "k\(key)"), !Self.isValid(data, key: key) {
                            problems.add(1, ordering: .relaxed)
                        }
                    case 40..<80:
                        let size = Bool.random(using: &rng) ? Int.random(in: 2..<2_000, using: &rng) : Int.random(in: 2_001..<20_000, using: &rng)
                        try cache.setObject(Self.value(key: key, version: op * 10 + thread, size: size), forKey: "k\(key)",
                                            extendedData: Data([UInt8(thread)]))
                    case 80..<88: try cache.removeObject(forKey: "k\(key)")
                    case 88..<94: _ = try cache.containsObject(forKey: "k\(key)")
                    case 94..<97: _ = try cache.extendedData(forKey: "k\(key)")
                    case 97: try cache.trim(toCount: 100)
                    case 98: _ = try cache.totalCost()
                    default: try cache.trimToLimits()
                    }
                } catch {
                    problems.add(1, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(problems.load(ordering: .relaxed), 0)
        try cache.core.withStorage { (storage) throws(KVCacheError) in
            XCTAssertEqual(try storage._checkInvariants(), [])
        }
    }

    func testCacheRandomOperationsFromManyThreads() throws {
        let path = try makeDirectory()
        let cache = try Cache<Data>(path: path, inlineThreshold: 1_000)
        cache.memoryCache.countLimit = 40
        let problems = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var rng = SystemRandomNumberGenerator()
            for op in 0..<400 {
                let key = Int.random(in: 0..<100, using: &rng)
                do {
                    switch Int.random(in: 0..<100, using: &rng) {
                    case 0..<50:
                        if let data = try cache.object(forKey: "k\(key)"), !Self.isValid(data, key: key) {
                            problems.add(1, ordering: .relaxed)
                        }
                    case 50..<85:
                        let size = Int.random(in: 2..<3_000, using: &rng)
                        try cache.setObject(Self.value(key: key, version: op * 10 + thread, size: size), forKey: "k\(key)", cost: size)
                    case 85..<95: try cache.removeObject(forKey: "k\(key)")
                    case 95..<99: _ = try cache.containsObject(forKey: "k\(key)")
                    default: cache.memoryCache.removeAllObjects()
                    }
                } catch {
                    problems.add(1, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(problems.load(ordering: .relaxed), 0)
        XCTAssertNil(cache.memoryCache._checkInvariants())
    }

    /// Keys that differ only as bytes (canonically equal pairs, NUL, empty) from many threads, while one
    /// thread empties the cache with a progress handler that uses the cache itself: values never cross
    /// keys, no trap, no deadlock.
    func testOddKeysAndReentrantRemoveAllFromManyThreads() throws {
        let path = try makeDirectory()
        let cache = try Cache<Data>(path: path, inlineThreshold: 500)
        let keys = ["", "\0", "a\0", "\u{E9}", "e\u{301}", "\u{212B}", "\u{C5}", "A\u{30A}", "\u{1F600}", "plain"]
        let problems = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var rng = SystemRandomNumberGenerator()
            for op in 0..<300 {
                let index = Int.random(in: 0..<keys.count, using: &rng)
                do {
                    switch Int.random(in: 0..<100, using: &rng) {
                    case 0..<45:
                        if let data = try cache.object(forKey: keys[index]), !Self.isValid(data, key: index) {
                            problems.add(1, ordering: .relaxed)
                        }
                    case 45..<85:
                        let size = Int.random(in: 2..<1_500, using: &rng)
                        try cache.setObject(Self.value(key: index, version: op * 10 + thread, size: size), forKey: keys[index])
                    case 85..<98: try cache.removeObject(forKey: keys[index])
                    default:
                        try cache.removeAllObjects { _, _ in
                            if (try? cache.diskCache.containsObject(forKey: keys[index])) == nil { problems.add(1, ordering: .relaxed) }
                        }
                    }
                } catch {
                    problems.add(1, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(problems.load(ordering: .relaxed), 0)
        XCTAssertNil(cache.memoryCache._checkInvariants())
        try cache.diskCache.core.withStorage { (storage) throws(KVCacheError) in
            XCTAssertEqual(try storage._checkInvariants(), [])
        }
    }
}
