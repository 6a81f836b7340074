@testable import Fetcher
import Foundation
import TestSupport
import XCTest

final class NetworkThreadTests: XCTestCase {
    func testPerformRunsInOrderOnTheThread() {
        let thread = NetworkThread()
        defer { thread.stop(); thread.join() }
        XCTAssertFalse(thread.isCurrent)
        let seen = Mutex<[Int]>([])
        let offThread = Mutex(0)
        let done = expectation(description: "all closures ran")
        done.expectedFulfillmentCount = 1_000
        for index in 0..<1_000 {
            XCTAssertTrue(thread.perform {
                if !thread.isCurrent { offThread.withLock { $0 += 1 } }
                seen.withLock { $0.append(index) }
                done.fulfill()
            })
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(seen.withLock { $0 }, Array(0..<1_000))
        XCTAssertEqual(offThread.withLock { $0 }, 0)
        XCTAssertEqual(thread.name, "webimage.network")
    }

    func testPerformAfterStopIsRefused() {
        let thread = NetworkThread()
        thread.stop()
        thread.join()
        thread.join() // twice is fine
        XCTAssertFalse(thread.perform {})
    }

    func testStartAndStop500PrivateThreads() throws {
        let baseline = try openFileDescriptorTargets()
        for _ in 0..<500 {
            let thread = NetworkThread()
            let ran = expectation(description: "ran")
            thread.perform { ran.fulfill() }
            wait(for: [ran], timeout: 10)
            thread.stop()
            thread.join()
        }
        XCTAssertEqual(try openFileDescriptorTargets(), baseline, "every multi handle and wake-up socket pair was closed")
        XCTAssertEqual(CurlEasyHandle.liveCount.load(ordering: .relaxed), 0)
    }

    func testStopEndsRunningAndQueuedOperations() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        server.route("/slow", .drip(testPayload(100_000), chunk: 100, interval: 0.05))
        let thread = NetworkThread()
        let queue = FetchQueue(thread: thread, maxConcurrentTransfers: 1)
        let started = expectation(description: "first bytes")
        started.assertForOverFulfill = false
        let running = FetchRecorder(expectation(description: "running op completes"))
        queue.fetch(FetchRequest(url: server.url("/slow")), onData: { _ in started.fulfill() }) { result in
            running.events.withLock { $0.completions.append(result) }
            running.done.fulfill()
        }
        let queued = FetchRecorder(expectation(description: "queued op completes"))
        queued.start(FetchRequest(url: server.url("/slow?2")), on: queue)
        wait(for: [started], timeout: 10)
        thread.stop()
        wait(for: [running.done, queued.done], timeout: 10)
        thread.join()
        XCTAssertEqual(running.snapshot.error, .networkThreadStopped)
        XCTAssertEqual(queued.snapshot.error, .networkThreadStopped)
        XCTAssertEqual(thread.activity.current, 0)
        XCTAssertEqual(CurlEasyHandle.liveCount.load(ordering: .relaxed), 0)

        let late = FetchRecorder(expectation(description: "late op completes"))
        let operation = late.start(FetchRequest(url: server.url("/slow")), on: queue)
        wait(for: [late.done], timeout: 1)
        XCTAssertEqual(late.snapshot.error, .networkThreadStopped)
        XCTAssertEqual(operation.state, .finished)
    }

    func testOperationsOfAReleasedQueueStillComplete() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        server.route("/a", .bytes([1, 2, 3]).delayed(by: 0.05))
        let thread = NetworkThread()
        let running = FetchRecorder(expectation(description: "running"))
        let held = FetchRecorder(expectation(description: "held"))
        do {
            let queue = FetchQueue(thread: thread)
            running.start(FetchRequest(url: server.url("/a")), on: queue)
            let suspended = FetchQueue(thread: thread)
            suspended.suspend()
            held.start(FetchRequest(url: server.url("/a?held")), on: suspended)
        } // both queues released here
        wait(for: [running.done], timeout: 10)
        XCTAssertEqual(running.snapshot.body, Data([1, 2, 3]))
        thread.stop()
        wait(for: [held.done], timeout: 10)
        thread.join()
        XCTAssertEqual(held.snapshot.error, .networkThreadStopped)
    }
}
