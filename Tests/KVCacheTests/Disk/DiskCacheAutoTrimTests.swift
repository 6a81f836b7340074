@testable import KVCache
import Dispatch
import Foundation
import Synchronization
import XCTest

/// The background trim loop: when a change of its interval takes effect, where it runs, how it logs failures.
final class DiskCacheAutoTrimTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-auto-trim") }
    override func tearDownWithError() throws { try directory.remove() }

    private func overfilledCache(count: Int, limit: Int) throws -> DiskCache {
        try overfilledDiskCache(path: directory.path, count: count, limit: limit)
    }

    /// A shorter interval set on a new cache trims within it, not after the 60 s round pending since the open.
    func testAShorterIntervalTakesEffectAtOnce() throws {
        let cache = try overfilledCache(count: 40, limit: 10)
        XCTAssertEqual(try cache.totalCount(), 40)
        cache.autoTrimInterval = 0.05
        XCTAssertEqual(cache.autoTrimInterval, 0.05)
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 },
                      "the background trim did not run within 20 s of the interval set to 0.05 s")
    }

    /// A longer interval set after a short one ends the short round: the trim that would have run does not.
    func testALongerIntervalEndsTheShorterRound() throws {
        let cache = try overfilledCache(count: 40, limit: 1_000)
        cache.autoTrimInterval = 0.2
        cache.autoTrimInterval = 3_600
        cache.countLimit = 10
        usleep(800_000)
        XCTAssertEqual(try cache.totalCount(), 40, "a round of the replaced 0.2 s interval still trimmed")
    }

    /// Many interval changes at once, from many threads, leave one loop: the cache trims, and keeps trimming
    /// as new values arrive (the loop did not end), with no error.
    func testRacingIntervalChangesLeaveOneLiveLoop() throws {
        let cache = try overfilledCache(count: 40, limit: 10)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            cache.autoTrimInterval = index == 63 ? 0.05 : 0.05 + Double(index % 5) * 0.01
        }
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 })
        for index in 100..<140 { try cache.setObject(Data([1]), forKey: "key-\(index)") }
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 }, "the loop ended after its first trim")
    }

    /// The auto-trim runs on the folder's own serial queue, not on a global queue whose few threads every
    /// other task of its priority in the process shares.
    func testTheAutoTrimRunsOnItsOwnQueue() throws {
        let cache = try overfilledCache(count: 4 * KVStorage.trimBatch, limit: 10)
        let marker = DispatchSpecificKey<Int>()
        cache.core.trimQueue.setSpecific(key: marker, value: 1)
        let queues = Mutex<[Int?]>([])
        cache.core.trimStepHook.withLock { hook in
            hook = { _ in
                let onTrimQueue = DispatchQueue.getSpecific(key: marker)
                queues.withLock { $0.append(onTrimQueue) }
            }
        }
        cache.autoTrimInterval = 0.05
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 })
        let seen = queues.withLock { $0 }
        XCTAssertFalse(seen.isEmpty, "the trim took no step that had more to do")
        XCTAssertTrue(seen.allSatisfy { $0 == 1 }, "trim steps ran off the trim queue: \(seen)")
        XCTAssertEqual(cache.core.trimQueue.label, DiskCacheCore.trimQueueLabel)
    }

    /// The first failure in a row is logged as an error, then one in every `autoTrimFailureLogPeriod`.
    func testFailuresInARowAreLoggedAsErrorsOnlySometimes() {
        let period = DiskCacheCore.autoTrimFailureLogPeriod
        XCTAssertFalse(DiskCacheCore.logsAutoTrimFailure(0))
        XCTAssertTrue(DiskCacheCore.logsAutoTrimFailure(1))
        XCTAssertFalse(DiskCacheCore.logsAutoTrimFailure(2))
        XCTAssertFalse(DiskCacheCore.logsAutoTrimFailure(period))
        XCTAssertTrue(DiskCacheCore.logsAutoTrimFailure(period + 1))
        XCTAssertFalse(DiskCacheCore.logsAutoTrimFailure(period + 2))
        XCTAssertTrue(DiskCacheCore.logsAutoTrimFailure(2 * period + 1))
        let logged = (1...(10 * period)).filter(DiskCacheCore.logsAutoTrimFailure).count
        XCTAssertEqual(logged, 10, "one error per period of failures")
    }

    /// A folder removed under a live cache fails every round: the failures are counted (so only some are
    /// logged as errors), the loop goes on, and the cache is still released without a hang.
    func testARemovedFolderFailsEveryRoundAndIsCounted() throws {
        var cache: DiskCache? = try overfilledCache(count: 20, limit: 1_000)
        let core = try XCTUnwrap(cache?.core)
        try FileManager.default.removeItem(atPath: directory.path)
        cache?.autoTrimInterval = 0.02
        XCTAssertTrue(eventually(within: 20) { core.autoTrimFailures.load(ordering: .relaxed) >= 3 },
                      "failures counted: \(core.autoTrimFailures.load(ordering: .relaxed))")
        cache = nil
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    }
}
