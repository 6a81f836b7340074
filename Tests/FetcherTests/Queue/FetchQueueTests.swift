import Fetcher
import Foundation
import TestSupport
import XCTest

final class FetchQueueTests: FetchTestCase {
    /// Starts `paths` on a suspended queue of one slot, resumes it, and returns the order the server saw.
    private func serverOrder(_ requests: [FetchRequest]) -> [String] {
        queue.maxConcurrentTransfers = 1
        queue.suspend()
        let recorders = requests.map { request -> FetchRecorder in
            let recorder = FetchRecorder(expectation(description: request.url.absoluteString))
            recorder.start(request, on: queue)
            return recorder
        }
        queue.resume()
        wait(for: recorders.map(\.done), timeout: 10)
        return server.requests(for: "/o").map(\.uri)
    }

    func testFIFOAndLIFO() {
        server.route("/o", .bytes([1]))
        let fifo = serverOrder((0..<5).map { request("/o?f\($0)") })
        XCTAssertEqual(fifo, (0..<5).map { "/o?f\($0)" })
        queue.order = .lifo
        let lifo = serverOrder((0..<5).map { request("/o?l\($0)") }).suffix(5)
        XCTAssertEqual(Array(lifo), (0..<5).reversed().map { "/o?l\($0)" })
    }

    func testPrioritiesGoFirst() {
        server.route("/o", .bytes([1]))
        let priorities: [FetchPriority] = [.low, .normal, .veryHigh, .veryLow, .high, .normal]
        let order = serverOrder(priorities.enumerated().map { index, priority in
            var request = request("/o?\(index)")
            request.priority = priority
            return request
        })
        XCTAssertEqual(order, ["/o?2", "/o?4", "/o?1", "/o?5", "/o?0", "/o?3"])
    }

    func testAtMostMaxConcurrentTransfers() {
        server.route("/d", .bytes(testPayload(1_000)).delayed(by: 0.05))
        queue.maxConcurrentTransfers = 3
        XCTAssertEqual(queue.maxConcurrentTransfers, 3)
        let peak = Mutex(0)
        let observation = thread.activity.observe { count in peak.withLock { $0 = max($0, count) } }
        let recorders = (0..<15).map { index -> FetchRecorder in
            let recorder = FetchRecorder(expectation(description: "\(index)"))
            recorder.start(request("/d?\(index)"), on: queue)
            return recorder
        }
        wait(for: recorders.map(\.done), timeout: 20)
        observation.cancel()
        XCTAssertEqual(peak.withLock { $0 }, 3)
        XCTAssertTrue(recorders.allSatisfy { $0.snapshot.body?.count == 1_000 })
        XCTAssertEqual(FetchQueue(thread: thread).maxConcurrentTransfers, 6, "the default")
    }

    func testSuspendHoldsQueuedRequestsUntilResume() {
        server.route("/s", .bytes([7]))
        queue.suspend()
        XCTAssertTrue(queue.isSuspended)
        let recorder = FetchRecorder(expectation(description: "done"))
        let operation = recorder.start(request("/s"), on: queue)
        flush(thread)
        XCTAssertEqual(operation.state, .ready)
        XCTAssertEqual(server.requestCount(for: "/s"), 0)
        queue.resume()
        wait(for: [recorder.done], timeout: 10)
        XCTAssertEqual(operation.state, .finished)
        XCTAssertEqual(recorder.snapshot.body, Data([7]))
    }

    func testCancelBeforeStartMidBodyAndAfterFinish() {
        server.route("/drip", .drip(testPayload(50_000), chunk: 500, interval: 0.02))
        server.route("/quick", .bytes([1]))
        // Before start.
        queue.suspend()
        let early = FetchRecorder(expectation(description: "early"))
        let earlyOperation = early.start(request("/quick"), on: queue)
        earlyOperation.cancel()
        wait(for: [early.done], timeout: 5)
        XCTAssertEqual(early.snapshot.error, .cancelled)
        XCTAssertEqual(earlyOperation.state, .cancelled)
        XCTAssertTrue(earlyOperation.isCancelled)
        queue.resume()
        flush(thread)
        XCTAssertEqual(server.requestCount(for: "/quick"), 0)

        // Mid-body, from the data callback.
        let middle = FetchRecorder(expectation(description: "middle"))
        let slot = Mutex<FetchOperation?>(nil)
        let chunks = Mutex(0)
        let operation = queue.fetch(request("/drip"), onData: { _ in
            chunks.withLock { $0 += 1 }
            slot.withLock { $0 }?.cancel()
        }) { result in
            middle.events.withLock { $0.completions.append(result) }
            middle.done.fulfill()
        }
        slot.withLock { $0 = operation }
        wait(for: [middle.done], timeout: 10)
        flush(thread)
        XCTAssertEqual(middle.snapshot.error, .cancelled)
        XCTAssertLessThan(chunks.withLock { $0 }, 100, "no data after the cancel took effect")
        XCTAssertEqual(thread.activity.current, 0, "the transfer stopped")

        // After finish.
        let late = fetchAndWait(request("/quick"), on: queue)
        XCTAssertNotNil(late.body)
        let finished = FetchRecorder(expectation(description: "finished"))
        let done = finished.start(request("/quick"), on: queue)
        wait(for: [finished.done], timeout: 5)
        done.cancel()
        flush(thread)
        XCTAssertEqual(done.state, .finished)
        XCTAssertFalse(done.isCancelled)
        XCTAssertEqual(finished.snapshot.completions.count, 1)
    }

    func testCancelAll() {
        server.route("/drip", .drip(testPayload(50_000), chunk: 500, interval: 0.05))
        queue.maxConcurrentTransfers = 2
        let recorders = (0..<6).map { index -> FetchRecorder in
            let recorder = FetchRecorder(expectation(description: "\(index)"))
            recorder.start(request("/drip?\(index)"), on: queue)
            return recorder
        }
        flush(thread)
        queue.cancelAll()
        wait(for: recorders.map(\.done), timeout: 10)
        XCTAssertTrue(recorders.allSatisfy { $0.snapshot.error == .cancelled })
        XCTAssertLessThanOrEqual(server.requestCount(for: "/drip"), 2)
    }

    func testActivityCounterRisesAndFalls() {
        server.route("/a", .bytes([1]).delayed(by: 0.05))
        let values = Mutex<[Int]>([])
        let observation = thread.activity.observe { count in values.withLock { $0.append(count) } }
        _ = fetchAndWait(request("/a"), on: queue)
        flush(thread)
        observation.cancel()
        XCTAssertEqual(values.withLock { $0 }, [1, 0])
        XCTAssertEqual(thread.activity.current, 0)
    }
}
