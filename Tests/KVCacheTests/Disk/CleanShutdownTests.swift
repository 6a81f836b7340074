@testable import KVCache
import Foundation
import TestSupport
import XCTest

/// The first opener after a clean shutdown skips `quick_check` and the crash cleanup; after a process was
/// killed with the folder open (a real SIGKILLed child), it runs both. And a trim releases the store lock
/// between its steps.
final class CleanShutdownTests: XCTestCase {
    /// Child side: opens the folder, writes, says READY and waits to be killed.
    func testCleanShutdownChildHolder() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_CLEAN_HOLDER_PATH"]
        else { throw XCTSkip("holder: runs only inside CleanShutdownTests") }
        let storage = try KVStorage(path: path, type: .mixed)
        try storage.save(key: "child", value: testBytes(5_000, seed: 3), filename: "child-file")
        emitLine("READY")
        awaitStartSignal()
    }

    private func killChildHolding(_ path: String) throws {
        let child = try ChildProcess(test: "KVCacheTests.CleanShutdownTests/testCleanShutdownChildHolder",
                                     environment: ["KVCACHE_CLEAN_HOLDER_PATH": path])
        XCTAssertTrue(child.waitUntilReady(timeout: 60))
        child.kill()
        _ = child.finish()
        XCTAssertTrue(child.wasKilled)
    }

    func testOpenAfterCleanShutdownSkipsTheCheckAndAfterAKillRunsIt() throws {
        let directory = try TemporaryDirectory("kvcache-clean")
        defer { try? directory.remove() }
        // A new folder: nothing says it was closed cleanly.
        var storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertTrue(storage.openReport.ranQuickCheck)
        try storage.save(key: "a", value: testBytes(100, seed: 1))
        storage.close()

        // Closed cleanly (two instances, closed in either order): the next first opener does no check.
        storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(storage.openReport, .init(previousShutdownWasClean: true, ranQuickCheck: false, ranCrashCleanup: false))
        let second = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertFalse(second.openReport.ranQuickCheck, "a second opener never checks")
        storage.close()
        second.close()
        storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(storage.openReport, .init(previousShutdownWasClean: true, ranQuickCheck: false, ranCrashCleanup: false))
        storage.close()

        // A process killed with the folder open: the next first opener checks and cleans up.
        try killChildHolding(directory.path)
        storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(storage.openReport, .init(previousShutdownWasClean: false, ranQuickCheck: true, ranCrashCleanup: true))
        XCTAssertEqual(try storage.itemValue(forKey: "child"), testBytes(5_000, seed: 3))
        XCTAssertEqual(try storage._checkInvariants(), [])

        // Killed while another instance had the folder open: that one's clean close does not hide the kill.
        try killChildHolding(directory.path)
        storage.close()
        storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertTrue(storage.openReport.ranQuickCheck)
        XCTAssertTrue(storage.openReport.ranCrashCleanup)
        storage.close()
    }

    /// A trim of many entries takes the store lock one step at a time: from inside the trim (its step hook,
    /// called between steps), another thread's read and `totalCount()` complete, and see a partly trimmed store.
    func testTrimReleasesTheStoreLockBetweenSteps() throws {
        let directory = try TemporaryDirectory("kvcache-trim-steps")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        for i in 0..<1_000 { try cache.setObject(testBytes(200, seed: i), forKey: "k\(i)") }
        for i in 900..<1_000 { XCTAssertNotNil(try cache.object(forKey: "k\(i)")) }
        let observed = Observed()
        cache.core.trimStepHook.withLock {
            $0 = { step in
                guard step == 5 else { return }
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    do {
                        let value = try cache.object(forKey: "k999")
                        let count = try cache.totalCount()
                        observed.value.withLock { $0 = [value == nil ? 0 : 1, count] }
                    } catch {
                        observed.value.withLock { $0 = [-1] }
                    }
                    done.signal()
                }
                // A correctness bound: with the lock held across steps, this read could never finish.
                if done.wait(timeout: .now() + 30) == .timedOut { observed.value.withLock { $0 = [-2] } }
            }
        }
        try cache.trim(toCount: 100)
        let seen = observed.value.withLock { $0 }
        XCTAssertEqual(seen.first, 1, "the read inside the trim completed and found its value: \(seen)")
        if seen.count == 2 {
            XCTAssertLessThan(seen[1], 1_000, "some entries were already removed")
            XCTAssertGreaterThan(seen[1], 100, "the trim was not finished")
        }
        XCTAssertEqual(try cache.totalCount(), 100)
        for i in 900..<1_000 { XCTAssertTrue(try cache.containsObject(forKey: "k\(i)"), "recently read k\(i) kept") }
    }

    /// Reads made while a trim runs are not folded by it (it folds the access log as far as it reached when
    /// it began): a reader as busy as the folds can no longer postpone the removals. Between every two steps
    /// this hook reads every key (1,024 distinct keys append a log batch); after 200 steps it stops, so a
    /// trim that chases the reader still ends, and fails the bound below.
    func testReadsDuringATrimDoNotPostponeItsRemovals() throws {
        let directory = try TemporaryDirectory("kvcache-trim-reader")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = (0..<1_100).map { "k\($0)" }
        for key in keys { try cache.setObject(testBytes(100, seed: key.count), forKey: key) }
        let steps = Observed()
        cache.core.trimStepHook.withLock {
            $0 = { step in
                steps.value.withLock { $0 = [step] }
                guard step <= 200 else { return }
                for key in keys { _ = try? cache.object(forKey: key) }
            }
        }
        try cache.trim(toCount: 1_000)
        XCTAssertEqual(try cache.totalCount(), 1_000)
        let taken = steps.value.withLock { $0.first ?? 0 }
        XCTAssertLessThan(taken, 50, "the trim took \(taken) steps: it chased the reader's access times")
    }

    /// What the hook's reader saw (shared with the hook's thread).
    private final class Observed: Sendable {
        let value = Mutex<[Int]>([])
    }
}
