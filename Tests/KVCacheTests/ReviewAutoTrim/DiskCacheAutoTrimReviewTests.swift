@testable import KVCache
import Dispatch
import Foundation
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Review of 1b382c5 (the auto-trim loop on a serial queue of the folder's own, a change of
/// `autoTrimInterval` starting a new round at once, failures in a row counted).
final class DiskCacheAutoTrimReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-auto-trim-review") }
    override func tearDownWithError() throws { try? directory.remove() }

    private func overfilledCache(count: Int, limit: Int) throws -> DiskCache {
        try overfilledDiskCache(path: directory.path, count: count, limit: limit)
    }

    // MARK: Defect: a set of the interval restarts the countdown, so sets more often than it starve the loop

    /// `DiskCache(path:)` hands out the folder's shared instance, so code that configures its handle each time
    /// it opens one (limits, interval) sets the same interval again and again. Each set started a new round
    /// one full interval away and ended the pending one: set more often than the interval, the cache never
    /// trimmed again (before 1b382c5 the loop ran regardless).
    func testSettingTheSameIntervalAgainAndAgainDoesNotStarveTheLoop() throws {
        let cache = try overfilledCache(count: 40, limit: 10)
        cache.autoTrimInterval = 0.3
        let deadline = Date(timeIntervalSinceNow: 4)
        var trimmed = false
        while Date() < deadline, !trimmed {
            cache.autoTrimInterval = 0.3
            usleep(100_000)
            trimmed = try cache.totalCount() <= 10
        }
        XCTAssertTrue(trimmed, "no background trim in 4 s of an interval of 0.3 s, set again every 0.1 s")
    }

    /// The same with values that change (an app adapting the interval to its load every 0.1 s, each value
    /// at most 0.4 s): the next trim must come within the longest of them after the last one, not never.
    func testAnIntervalAdjustedOftenDoesNotStarveTheLoop() throws {
        let cache = try overfilledCache(count: 40, limit: 10)
        let deadline = Date(timeIntervalSinceNow: 4)
        var trimmed = false
        var toggle = false
        while Date() < deadline, !trimmed {
            toggle.toggle()
            cache.autoTrimInterval = toggle ? 0.3 : 0.4
            usleep(100_000)
            trimmed = try cache.totalCount() <= 10
        }
        XCTAssertTrue(trimmed, "no background trim in 4 s of intervals of 0.3-0.4 s, adjusted every 0.1 s")
    }

    // MARK: Defect: a trim skipped (another holder of trim.lock) counts as a success

    /// A trim that did not run (another process, or handle, holds `trim.lock`) is no success: it reset the
    /// failures in a row to 0 and logged "background trim succeeded again", so a trim that keeps failing
    /// beside another trimmer logged its failure as an error again after every skip.
    func testASkippedTrimDoesNotResetTheFailuresInARow() throws {
        let cache = try DiskCache(path: directory.path)
        let core = cache.core
        let lockPath = directory.path + "/trim.lock"
        try? FileManager.default.removeItem(atPath: lockPath)
        // Failing: `trim.lock` is a folder (open O_RDWR fails with EISDIR).
        try FileManager.default.createDirectory(atPath: lockPath, withIntermediateDirectories: false)
        cache.autoTrimInterval = 0.02
        XCTAssertTrue(eventually(within: 20) { core.autoTrimFailures.load(ordering: .relaxed) >= 3 })
        // Stop the loop (and wait for a round that is running), then make the next trims skip: the lock is
        // held by another open file description (as another process would).
        cache.autoTrimInterval = 3_600
        core.trimQueue.sync {}
        let failures = core.autoTrimFailures.load(ordering: .relaxed)
        try FileManager.default.removeItem(atPath: lockPath)
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertEqual(flock(fd, LOCK_EX | LOCK_NB), 0)
        cache.autoTrimInterval = 0.02
        usleep(500_000)
        cache.autoTrimInterval = 3_600
        core.trimQueue.sync {}
        XCTAssertEqual(core.autoTrimFailures.load(ordering: .relaxed), failures,
                       "a trim skipped for the lock held elsewhere counted as a success (failures in a row reset)")
    }

    // MARK: Attacks that held (regressions)

    /// 64 racing sets leave one loop: in a removed folder every round fails and is counted, so the count
    /// over a while is the number of rounds that ran (one loop at 0.1 s: about 10 a second).
    func testRacingSetsLeaveExactlyOneLoop() throws {
        var cache: DiskCache? = try DiskCache(path: directory.path)
        let core = try XCTUnwrap(cache?.core)
        try FileManager.default.removeItem(atPath: directory.path)
        let shared = cache!
        DispatchQueue.concurrentPerform(iterations: 64) { _ in shared.autoTrimInterval = 0.1 }
        let start = core.autoTrimFailures.load(ordering: .relaxed)
        usleep(1_500_000)
        let rounds = core.autoTrimFailures.load(ordering: .relaxed) - start
        XCTAssertLessThanOrEqual(rounds, 20, "\(rounds) rounds in 1.5 s at 0.1 s: more than one loop")
        XCTAssertGreaterThanOrEqual(rounds, 1, "no round ran")
        cache = nil
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    }

    /// A set from inside the running trim (its step hook, on the trim queue) neither deadlocks nor ends the
    /// loop: the cache still trims what is written afterwards.
    func testASetFromInsideTheTrimKeepsTheLoopAlive() throws {
        let cache = try overfilledCache(count: 4 * KVStorage.trimBatch, limit: 10)
        let core = cache.core
        let sets = Mutex(0)
        core.trimStepHook.withLock { hook in
            hook = { [weak core] _ in
                guard let core else { return }
                sets.withLock { $0 += 1 }
                core.setAutoTrimInterval(0.05)
            }
        }
        cache.autoTrimInterval = 0.05
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 })
        XCTAssertGreaterThan(sets.withLock { $0 }, 0)
        for index in 0..<40 { try cache.setObject(Data([1]), forKey: "more-\(index)") }
        XCTAssertTrue(try eventually(within: 20) { try cache.totalCount() <= 10 }, "the loop ended")
    }

    /// The last handle released while a round's trim is running: the release waits for the trim's step, the
    /// core is freed (nothing of the loop keeps it), and the folder reopens with a loop that trims.
    func testReleaseDuringARunningRoundFreesTheCoreAndAReopenTrims() throws {
        var cache: DiskCache? = try overfilledCache(count: 4 * KVStorage.trimBatch, limit: 10)
        weak var weakCore = cache?.core
        let reached = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        cache?.core.trimStepHook.withLock { hook in
            hook = { step in
                if step == 1 { reached.signal(); proceed.wait() }
            }
        }
        cache?.autoTrimInterval = 0.05
        XCTAssertEqual(reached.wait(timeout: .now() + 20), .success)
        let released = DispatchSemaphore(value: 0)
        let mine = Mutex<DiskCache?>(cache)
        cache = nil
        DispatchQueue.global().async {
            mine.withLock { $0 = nil }
            released.signal()
        }
        usleep(100_000)
        XCTAssertEqual(released.wait(timeout: .now()), .timedOut, "the release did not wait for the running trim")
        proceed.signal()
        XCTAssertEqual(released.wait(timeout: .now() + 20), .success)
        XCTAssertTrue(eventually(within: 5) { weakCore == nil }, "the closed core is still alive")

        let reopened = try DiskCache(path: directory.path)
        let before = try reopened.totalCount()
        XCTAssertGreaterThan(before, 10, "the closed core's trim went on after close")
        reopened.countLimit = 10
        reopened.autoTrimInterval = 0.05
        XCTAssertTrue(try eventually(within: 20) { try reopened.totalCount() <= 10 }, "the reopened folder never trims")
    }
}
