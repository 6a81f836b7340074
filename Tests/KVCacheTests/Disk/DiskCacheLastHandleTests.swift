@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// The release of the last `DiskCache` handle for a folder closes its store before it returns, even while a
/// background task (an auto-trim, a checkpoint, a snapshot release) holds the core: once it returns no task
/// of the cache runs or starts, so the folder may be removed at once. Before, the core lived on in whichever
/// background task held it last and closed there, writing to the folder while a caller removed it
/// (`KVStorageSnapshotTests.testDiskCacheReleasesAnIdleSnapshot` failed twice in CI with EPERM from the
/// removal in its tearDown).
final class DiskCacheLastHandleTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testTheLastHandleClosesTheStoreThoughATaskStillHoldsTheCore() throws {
        var first: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        var second: DiskCache? = try DiskCache(path: directory.path)
        let core = try XCTUnwrap(first?.core)
        XCTAssertTrue(core === second?.core)
        try first?.setObject(Data(repeating: 7, count: 10), forKey: "inline")
        try first?.setObject(Data(repeating: 8, count: 1_000), forKey: "file")

        first = nil
        XCTAssertFalse(core.storage.withLock { $0.isClosed }, "another handle still uses the store")
        XCTAssertEqual(try second?.object(forKey: "file"), Data(repeating: 8, count: 1_000))

        second = nil // `core` (this test's reference) stands for a background task holding it
        XCTAssertTrue(core.storage.withLock { $0.isClosed })
        XCTAssertTrue(core.background.isClosed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path + "/manifest.sqlite-wal"),
                       "the manifest's last connection is closed, so SQLite removed its WAL")

        let reopened = try DiskCache(path: directory.path)
        XCTAssertFalse(reopened.core === core, "a closed core is never handed out again")
        XCTAssertEqual(try reopened.object(forKey: "inline"), Data(repeating: 7, count: 10))
        XCTAssertEqual(try reopened.object(forKey: "file"), Data(repeating: 8, count: 1_000))
    }

    /// Every kind of background task, scheduled after the close, does nothing to the folder.
    func testNoBackgroundTaskRunsAfterTheClose() throws {
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        let core = try XCTUnwrap(cache?.core)
        cache?.countLimit = 0
        for i in 0..<10 { try cache?.setObject(Data(repeating: UInt8(i), count: 500), forKey: "k\(i)") }
        cache = nil

        let left = directory.path + "/trash/left-by-the-test"
        XCTAssertTrue(FileManager.default.createFile(atPath: left, contents: Data([1])))
        core.scheduleEmptyTrash()
        core.waitForTrashSweep()
        XCTAssertTrue(FileManager.default.fileExists(atPath: left), "a sweep ran after the close")

        try? FileManager.default.removeItem(atPath: directory.path + "/trim.lock")
        try core.trimToLimits()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path + "/trim.lock"), "a trim ran after the close")

        core.scheduleCheckpoint()
        core.scheduleLogFolds()
        core.scheduleSnapshotRelease()
        core.waitForCheckpoint()
        XCTAssertFalse(core.background.run { XCTFail("the gate let a task in after the close") })

        let reopened = try DiskCache(path: directory.path, inlineThreshold: 100)
        XCTAssertEqual(try reopened.totalCount(), 10, "nothing was trimmed after the close")
    }

    /// A trim running in the background when the last handle goes: the release waits for its current step,
    /// the trim stops there (the rest is the next opener's), and when the release returns the trim has let
    /// go of `trim.lock` and the store is closed.
    func testAReleaseDuringABackgroundTrimWaitsForItsStepAndStopsIt() throws {
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        let core = try XCTUnwrap(cache?.core)
        let entries = 40 * KVStorage.trimBatch
        for i in 0..<entries { try cache?.setObject(Data([UInt8(truncatingIfNeeded: i)]), forKey: "k\(i)") }
        cache?.countLimit = 0

        let trim = PausedBackgroundTrim(core: core)

        let released = DispatchSemaphore(value: 0)
        let lastHandle = Mutex<DiskCache?>(cache)
        cache = nil
        DispatchQueue.global().async {
            lastHandle.withLock { $0 = nil } // the release: closes the store
            released.signal()
        }
        // The release has begun closing, and waits for the trim, which waits for us.
        let closing = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in core.background.isClosed }, object: nil)
        wait(for: [closing], timeout: 30)
        XCTAssertEqual(released.wait(timeout: .now() + 0.2), .timedOut, "the release returned while the trim ran")
        trim.resume()
        XCTAssertEqual(released.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(core.storage.withLock { $0.isClosed })
        XCTAssertEqual(trim.ended.wait(timeout: .now()), .success, "the release returned before the trim ended")
        XCTAssertLessThanOrEqual(trim.stepsSeen, 1, "the trim went on after the close")
        let lock = try TrimLock(path: directory.path + "/trim.lock")
        XCTAssertNotNil(lock, "the trim still holds trim.lock")
        lock?.release()

        let reopened = try DiskCache(path: directory.path, inlineThreshold: 100)
        let left = try reopened.totalCount()
        XCTAssertGreaterThan(left, 0, "the trim finished instead of stopping")
        XCTAssertLessThan(left, entries, "the trim's first steps were lost")
    }

    /// The attack on what CI saw: a cache busy with every kind of background work (a trim, a checkpoint, a
    /// trash sweep, a snapshot release) is released and its folder removed at once, 40 times. Each removal
    /// must succeed and nothing may recreate the folder afterwards.
    func testAFolderRemovedRightAfterTheReleaseStaysRemoved() throws {
        for round in 0..<40 {
            let path = directory.path + "/round\(round)"
            var cache: DiskCache? = try DiskCache(path: path, inlineThreshold: 100)
            let core = try XCTUnwrap(cache?.core)
            for i in 0..<200 { try cache?.setObject(Data(repeating: UInt8(i & 0xFF), count: i % 3 == 0 ? 300 : 20), forKey: "k\(i)") }
            for i in stride(from: 0, to: 200, by: 3) { try cache?.setObject(Data(repeating: 1, count: 400), forKey: "k\(i)") }
            _ = try cache?.object(forKey: "k1") // a read snapshot, so a release is scheduled
            cache?.countLimit = 10
            DispatchQueue.global().async { core.background.run { try? core.trimToLimits() } }
            core.scheduleCheckpoint()
            core.scheduleEmptyTrash()
            cache = nil
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                XCTFail("round \(round): removing the folder right after the release failed: \(error)")
            }
            usleep(2_000)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "round \(round): something recreated the folder")
        }
    }

    /// Eight threads open, use and release handles for one folder 100 times each, so last-handle closes race
    /// new opens: every operation succeeds (no handle ever gets a closed core) and every write is kept.
    func testOpensRacingLastHandleReleasesLoseNothing() throws {
        let path = directory.path
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<100 {
                do {
                    let cache = try DiskCache(path: path, inlineThreshold: 100)
                    let value = Data(repeating: UInt8(truncatingIfNeeded: thread * 100 + i), count: i % 2 == 0 ? 10 : 200)
                    try cache.setObject(value, forKey: "t\(thread)-\(i)")
                    if try cache.object(forKey: "t\(thread)-\(i)") != value {
                        failures.withLock { $0.append("t\(thread)-\(i): read back other bytes") }
                    }
                } catch {
                    failures.withLock { $0.append("t\(thread)-\(i): \(error)") }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        let cache = try DiskCache(path: path, inlineThreshold: 100)
        XCTAssertEqual(try cache.totalCount(), 800)
        for thread in 0..<8 {
            for i in 0..<100 {
                let value = Data(repeating: UInt8(truncatingIfNeeded: thread * 100 + i), count: i % 2 == 0 ? 10 : 200)
                XCTAssertEqual(try cache.object(forKey: "t\(thread)-\(i)"), value, "t\(thread)-\(i)")
            }
        }
        XCTAssertEqual(DiskCacheRegistry.handles(forPath: path), 1, "only this test's handle is counted")
    }
}
