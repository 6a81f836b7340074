@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// A trim step stops removing once `KVStorage.stepDuration` has passed (after at least one removal), so
/// the time it holds the store lock does not grow with a slow machine or cold pages: with a fixed 64 rows, a
/// 1M-entry store on a slow 2-core machine held the lock 15–30 ms a step (up to 96 ms).
final class DiskCacheTrimStepDurationTests: XCTestCase {
    /// Trims `cache` (filled with `count` entries) to `target` and returns the entries removed by each step.
    private func removalsPerStep(duration: Double, count: Int, target: Int) throws -> [Int] {
        let directory = try TemporaryDirectory("kvcache-trim-step-duration")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        for index in 0..<count { try cache.setObject(testBytes(64, seed: index), forKey: "key-\(index)") }
        cache.core.storage.withLock { $0.stepDuration = duration }
        let counts = Mutex<[Int]>([])
        cache.core.trimStepHook.withLock { hook in
            hook = { _ in counts.withLock { $0.append((try? cache.totalCount()) ?? -1) } }
        }
        try cache.trim(toCount: target)
        XCTAssertEqual(try cache.totalCount(), target)
        // Entries left after each step (the hook runs between steps) → removals per step.
        let left = [count] + counts.withLock { $0 } + [target]
        return zip(left, left.dropFirst()).map { $0 - $1 }.filter { $0 > 0 }
    }

    func testAStepOutOfTimeRemovesOneEntryAndTheTrimStillFinishes() throws {
        let steps = try removalsPerStep(duration: 0, count: 150, target: 100)
        XCTAssertEqual(steps, Array(repeating: 1, count: 50), "a step went on past its time")
    }

    func testWithTimeLeftAStepRemovesAWholeBatch() throws {
        let steps = try removalsPerStep(duration: .infinity, count: 3 * KVStorage.trimBatch + 100, target: 100)
        XCTAssertEqual(steps, Array(repeating: KVStorage.trimBatch, count: 3))
    }

    func testTheAgeTrimIsBoundedToo() throws {
        let directory = try TemporaryDirectory("kvcache-trim-step-duration-age")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        for index in 0..<20 { try cache.setObject(testBytes(64, seed: index), forKey: "key-\(index)") }
        cache.core.storage.withLock { $0.stepDuration = 0 }
        let steps = Mutex(0)
        cache.core.trimStepHook.withLock { hook in hook = { _ in steps.withLock { $0 += 1 } } }
        Thread.sleep(forTimeInterval: 0.02)
        try cache.trim(toAge: 0.01)
        XCTAssertEqual(try cache.totalCount(), 0)
        XCTAssertGreaterThanOrEqual(steps.withLock { $0 }, 19, "20 removals in fewer steps than one each")
    }
}
