@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// The last handle released from inside one of the core's own background tasks (a log handler, or anything
/// the task frees, could do it): the close waits for the other tasks, not for the one it runs in.
final class DiskCacheCloseInsideItsTaskTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testTheLastReleaseInsideATaskOfItsOwnCoreCloses() throws {
        var cache: DiskCache? = try DiskCache(path: directory.path, inlineThreshold: 100)
        try cache?.setObject(Data([1, 2, 3]), forKey: "k")
        let core = try XCTUnwrap(cache?.core)
        let lastHandle = Mutex<DiskCache?>(cache)
        cache = nil
        let done = DispatchSemaphore(value: 0)
        let ran = Mutex(false)
        Thread {
            let entered = core.background.run {
                core.background.run { // nested, as a task that runs another's body
                    lastHandle.withLock { $0 = nil } // the release: closes the store from inside its own task
                }
                ran.withLock { $0 = true }
            }
            XCTAssertTrue(entered)
            done.signal()
        }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "the close waited for the task it runs in")
        XCTAssertTrue(ran.withLock { $0 })
        XCTAssertTrue(core.storage.withLock { $0.isClosed })
        XCTAssertFalse(core.background.run {}, "the gate is closed")
        XCTAssertEqual(try DiskCache(path: directory.path).object(forKey: "k"), Data([1, 2, 3]))
    }

    /// A close from inside a task still waits for a task running on another thread.
    func testACloseInsideATaskStillWaitsForAnotherThreadsTask() throws {
        let gate = BackgroundWork()
        let otherStarted = DispatchSemaphore(value: 0)
        let otherMayEnd = DispatchSemaphore(value: 0)
        let otherEnded = Mutex(false)
        Thread {
            gate.run {
                otherStarted.signal()
                otherMayEnd.wait()
                otherEnded.withLock { $0 = true }
            }
        }.start()
        otherStarted.wait()
        let closed = DispatchSemaphore(value: 0)
        Thread {
            gate.run { gate.close() }
            closed.signal()
        }.start()
        XCTAssertEqual(closed.wait(timeout: .now() + 0.3), .timedOut, "the close did not wait for the other thread's task")
        otherMayEnd.signal()
        XCTAssertEqual(closed.wait(timeout: .now() + 20), .success)
        XCTAssertTrue(otherEnded.withLock { $0 })
    }
}
