@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// Review of "the release of a folder's last handle closes its store" (DiskCacheRegistry.releaseHandle →
/// DiskCacheCore.close → BackgroundWork.close, which waits for the running background task): user objects
/// (the `filename` closure and what it captures) whose release may end up releasing the last handle.
final class DiskCacheCloseReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Owns a handle; kept alive only by the `filename` closure that captured it.
    private final class HandleOwner: Sendable {
        let cache: DiskCache
        init(_ cache: DiskCache) { self.cache = cache }
    }

    /// The background trim copied the whole `Limits` (its `filename` closure included) into a local. When the
    /// user swaps the closure out meanwhile, that copy holds its last reference, and the trim frees it at its
    /// end, inside `background.run`. If the closure held the folder's last handle (its owner), that release
    /// ran `close()` on the trim's thread, which waits in `BackgroundWork.close()` for the trim itself: the
    /// trim never ends, the folder stays open, and the next `close` of anything waiting on it hangs too.
    func testAFilenameClosureFreedByABackgroundTrimDoesNotDeadlockTheClose() throws {
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        let core = try XCTUnwrap(cache?.core)
        for i in 0..<(4 * KVStorage.trimBatch) { try cache?.setObject(Data([UInt8(truncatingIfNeeded: i)]), forKey: "k\(i)") }
        do {
            let owner = HandleOwner(try DiskCache(path: directory.path))
            cache?.filename = { [owner] key in _ = owner; return MD5.hex(key) }
        }
        XCTAssertEqual(DiskCacheRegistry.handles(forPath: directory.path), 2)
        cache?.countLimit = 0

        let trim = PausedBackgroundTrim(core: core)

        // The user drops the closure (breaking its cycle) and then their own handle: the owner's is the last.
        cache?.filename = nil
        let released = DispatchSemaphore(value: 0)
        let mine = Mutex<DiskCache?>(cache)
        cache = nil
        DispatchQueue.global().async {
            mine.withLock { $0 = nil }
            released.signal()
        }
        trim.resume()

        // A deadlock never ends; 20 s is only how long we wait before calling it one.
        XCTAssertEqual(trim.ended.wait(timeout: .now() + 20), .success,
                       "the background trim never ended: it freed the last handle and waits for itself in close()")
        XCTAssertEqual(released.wait(timeout: .now() + 20), .success)
        XCTAssertTrue(core.storage.withLock { $0.isClosed }, "no handle is left, yet the store is open")
        XCTAssertNil(DiskCacheRegistry.handles(forPath: directory.path))
    }

    private final class Flag: Sendable { let value = Mutex<Bool?>(nil) }

    /// Watches, in its deinit, whether the `limits` lock of `cache`'s core is free (from another thread).
    private final class LockProbe: Sendable {
        let cache: DiskCache
        let lockWasFree: Flag
        init(_ cache: DiskCache, result: Flag) {
            self.cache = cache
            lockWasFree = result
        }

        deinit {
            let done = DispatchSemaphore(value: 0)
            let cache = self.cache
            DispatchQueue.global().async {
                _ = cache.countLimit
                done.signal()
            }
            // Free: at once. Held by our caller: never, until we return; 10 s is how long we wait to call it held.
            let free = done.wait(timeout: .now() + 10) == .success
            lockWasFree.value.withLock { $0 = free }
        }
    }

    /// Setting `filename` freed the old closure, and whatever it captured, under the core's `limits` lock: user
    /// code (deinits) under a lock. Since a `DiskCache` deinit may now close a store (waiting for its
    /// background task), the old closure's captures must be freed outside the lock.
    func testSettingFilenameFreesTheOldClosureOutsideTheLimitsLock() throws {
        let cache = try DiskCache(path: directory.path)
        let result = Flag()
        do {
            let probe = LockProbe(try DiskCache(path: directory.path), result: result)
            cache.filename = { [probe] key in _ = probe; return key }
        }
        cache.filename = nil
        XCTAssertEqual(result.value.withLock { $0 }, true, "the old closure's captures were freed under the limits lock")
    }
}

/// The registry's key, which is also the folder the core opens: `..` after a symlink.
final class DiskCachePathSpellingReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// `<a>/link/../cache`, where `link` points at `<real>/sub`, is `<real>/cache` to the system (the kernel
    /// resolves `..` after following the link). The registry standardized it lexically when `cache` did not
    /// exist yet (Foundation resolves the link only for a path that exists), so the cache opened `<a>/cache`,
    /// a folder the caller never named: another process spelling the folder physically would not see it.
    func testADotDotAfterASymlinkOpensTheFolderTheSystemMeans() throws {
        let real = directory.path + "/real"
        try FileManager.default.createDirectory(atPath: real + "/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/a", withIntermediateDirectories: true)
        XCTAssertEqual(symlink(real + "/sub", directory.path + "/a/link"), 0)
        let spelled = directory.path + "/a/link/../cache"

        let cache = try DiskCache(path: spelled)
        try cache.setObject(Data([1, 2, 3]), forKey: "k")
        var info = stat()
        XCTAssertEqual(stat(spelled + "/manifest.sqlite", &info), 0,
                       "the cache is not in the folder the path names (it opened \(cache.path))")
        XCTAssertEqual(stat(directory.path + "/a/cache", &info), -1, "the cache created a folder nobody named")

        // The same folder spelled physically is the same store.
        let physical = try DiskCache(path: real + "/cache")
        XCTAssertTrue(physical.core === cache.core)
        XCTAssertEqual(try physical.object(forKey: "k"), Data([1, 2, 3]))
    }
}

/// `DiskCache.deinit` now takes the registry's lock (to count the handle out), and the registry opened a core
/// while holding that lock. An open can wait without bound: for the exclusive opener of the folder (another
/// process running its crash cleanup, a full scan of a large store) in `flock(<folder>/lock, LOCK_SH)`.
/// Meanwhile every release of every handle in the process, of any folder, waited too: an `ImageCache`
/// dropped on the main thread hung on another folder's open.
final class DiskCacheRegistryOpenReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Whether some `flock` request on the file `path` is blocked (a "->" line of /proc/locks for its inode).
    private func someoneWaits(onLockAt path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else {
            return false
        }
        return locks.split(separator: "\n").contains { $0.contains("->") && $0.contains(":\(info.st_ino) ") }
    }

    func testAReleaseDoesNotWaitForAnotherFolderBeingOpened() throws {
        let x = directory.path + "/x", y = directory.path + "/y"
        let kept = try DiskCache(path: x)
        let dropped = Mutex<DiskCache?>(try DiskCache(path: x)) // not the last handle of x: no close
        try FileManager.default.createDirectory(atPath: y, withIntermediateDirectories: true)
        // Another process is the exclusive opener of y (its crash cleanup runs).
        let fd = open(y + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        var holding = true
        defer { if holding { flock(fd, LOCK_UN) }; close(fd) }

        // Threads of their own, not the global queue's: both block on purpose, and the global queue's few
        // workers can all be busy with other tests' leftover background work (this waited 30 s in CI for
        // an opener that never showed up in /proc/locks).
        let opened = DispatchSemaphore(value: 0)
        let openError = Mutex<String?>(nil)
        Thread {
            do {
                _ = try DiskCache(path: y)
            } catch {
                openError.withLock { $0 = "\(error)" }
            }
            opened.signal()
        }.start()
        let waiting = XCTNSPredicateExpectation(
            predicate: NSPredicate { [self] _, _ in
                someoneWaits(onLockAt: y + "/lock") || openError.withLock { $0 != nil }
            },
            object: nil)
        wait(for: [waiting], timeout: 60)
        XCTAssertNil(openError.withLock { $0 }, "the open of y failed instead of waiting for its lock")

        let released = DispatchSemaphore(value: 0)
        Thread {
            dropped.withLock { $0 = nil }
            released.signal()
        }.start()
        // Never, on the old code, while we hold the lock; 10 s is how long we wait before calling it that.
        let releasedWhileOpening = released.wait(timeout: .now() + 10) == .success
        // Let the open go on before anything here takes the registry's lock (on the old code it would wait too).
        flock(fd, LOCK_UN)
        holding = false
        XCTAssertTrue(releasedWhileOpening,
                      "releasing a handle of x waited for the open of y (the registry's lock held through it)")
        XCTAssertEqual(opened.wait(timeout: .now() + 30), .success)
        if !releasedWhileOpening { XCTAssertEqual(released.wait(timeout: .now() + 30), .success) }
        XCTAssertEqual(DiskCacheRegistry.handles(forPath: x), 1)
        withExtendedLifetime(kept) {}
    }
}

/// What stays behind a closed core: the core itself, its registry entry, a rescheduling auto-trim.
final class DiskCacheCloseLeakReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testAClosedCoreIsFreedWithEveryKindOfTaskPendingAndLeavesNoEntry() throws {
        weak var weakCore: DiskCacheCore?
        let (trashQueue, checkpointQueue): (DispatchQueue, DispatchQueue)
        do {
            let cache = try DiskCache(path: directory.path, inlineThreshold: 100)
            cache.autoTrimInterval = 0.01
            cache.countLimit = 10
            weakCore = cache.core
            (trashQueue, checkpointQueue) = (cache.core.trashQueue, cache.core.checkpointQueue)
            for i in 0..<50 { try cache.setObject(Data(repeating: 1, count: 200), forKey: "k\(i)") }
            for i in 0..<50 { try cache.setObject(Data(repeating: 2, count: 300), forKey: "k\(i)") } // trash
            _ = try cache.object(forKey: "k1") // a snapshot: its release is scheduled
            cache.core.scheduleCheckpoint()
            cache.core.scheduleLogFolds()
            XCTAssertEqual(DiskCacheRegistry.handles(forPath: directory.path), 1)
        }
        XCTAssertNil(DiskCacheRegistry.handles(forPath: directory.path), "the entry outlived the last handle")
        trashQueue.sync {}
        checkpointQueue.sync {}
        // The timed tasks (auto-trim every 10 ms, the snapshot release after 50 ms) hold the core weakly; one that
        // runs holds it for its run.
        let freed = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in weakCore == nil }, object: nil)
        wait(for: [freed], timeout: 10)
        XCTAssertNil(weakCore, "the closed core is kept alive")
    }
}

/// The last handle released from inside the completion-handler and async APIs (on `core.queue`).
final class DiskCacheCloseInCallbackReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testTheLastHandleDroppedInACompletionHandlerClosesOnceTheCallEnds() throws {
        let holder = Mutex<DiskCache?>(try DiskCache(path: directory.path, inlineThreshold: 100))
        let core = try XCTUnwrap(holder.withLock { $0?.core })
        let calls = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let cache = try XCTUnwrap(holder.withLock { $0 })
        cache.setObject(Data(repeating: 3, count: 500), forKey: "k") { result in
            calls.withLock { $0 += 1 }
            if case .failure(let error) = result { XCTFail("\(error)") }
            holder.withLock { $0 = nil } // the user's last reference; the call's own keeps the handle
            XCTAssertFalse(core.background.isClosed, "closed while the call ran")
            done.signal()
        }
        // The handle now lives only in the call; the close runs on the queue once it ends.
        _ = consume cache
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        let closed = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in core.storage.withLock { $0.isClosed } },
                                               object: nil)
        wait(for: [closed], timeout: 30)
        XCTAssertEqual(calls.withLock { $0 }, 1)
        let reopened = try DiskCache(path: directory.path)
        XCTAssertEqual(try reopened.object(forKey: "k"), Data(repeating: 3, count: 500))
    }

    func testAnAsyncCallWhoseCallerDropsTheHandleStillSucceeds() async throws {
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        let core = try XCTUnwrap(cache?.core)
        let write = Task { [cache] in try await cache!.setObject(Data(repeating: 4, count: 500), forKey: "k") }
        cache = nil
        try await write.value
        let reopened = try DiskCache(path: directory.path)
        let read = try await reopened.object(forKey: "k")
        XCTAssertEqual(read, Data(repeating: 4, count: 500))
        XCTAssertTrue(core.storage.withLock { $0.isClosed } || reopened.core === core)
    }
}
