import Fetcher
import Foundation
import TestSupport
import XCTest

final class CoalescingTests: FetchTestCase {
    func test1000RequestsOver100URLsMakeExactly100GETs() {
        for index in 0..<100 { server.route("/c\(index)", .bytes(testPayload(2_000, seed: UInt8(index)))) }
        queue.suspend() // all 1,000 in flight at once
        let recorders = (0..<1_000).map { index -> (Int, FetchRecorder) in
            let recorder = FetchRecorder(expectation(description: "\(index)"))
            recorder.start(request("/c\(index % 100)"), on: queue, wantsData: index % 2 == 0)
            return (index % 100, recorder)
        }
        queue.resume()
        wait(for: recorders.map(\.1.done), timeout: 30)
        XCTAssertEqual(server.totalRequestCount, 100)
        for index in 0..<100 { XCTAssertEqual(server.requestCount(for: "/c\(index)"), 1) }
        for (url, recorder) in recorders {
            XCTAssertEqual(recorder.snapshot.body, testPayload(2_000, seed: UInt8(url)))
            XCTAssertEqual(recorder.snapshot.completions.count, 1)
        }
    }

    func testOneCallerCancelsAloneAndALateJoinerCatchesUp() {
        let data = testPayload(20_000)
        server.route("/drip", .drip(data, chunk: 1_000, interval: 0.02))
        let first = FetchRecorder(expectation(description: "first"))
        let second = FetchRecorder(expectation(description: "second"))
        let late = FetchRecorder(expectation(description: "late"))
        let joined = expectation(description: "late joined")
        let firstOperation = first.start(request("/drip"), on: queue)
        second.start(request("/drip"), on: queue)
        // Join after some bytes arrived, from the data callback of a third caller.
        let started = Mutex(false)
        let queue: FetchQueue = self.queue
        let lateRequest = request("/drip")
        queue.fetch(request("/drip"), onData: { _ in
            let isFirst = started.withLock { value -> Bool in defer { value = true }; return !value }
            guard isFirst else { return }
            late.start(lateRequest, on: queue)
            firstOperation.cancel()
            joined.fulfill()
        }) { _ in }
        wait(for: [joined, first.done, second.done, late.done], timeout: 10)
        XCTAssertEqual(first.snapshot.error, .cancelled)
        XCTAssertEqual(second.snapshot.body, data)
        XCTAssertEqual(late.snapshot.body, data)
        XCTAssertEqual(late.snapshot.chunks.reduce(Data(), +), data, "the late joiner got the earlier bytes too")
        XCTAssertEqual(late.snapshot.responses.count, 1)
        XCTAssertEqual(server.requestCount(for: "/drip"), 1)
    }

    func testTransferStopsWhenTheLastCallerCancels() {
        server.route("/drip", .drip(testPayload(100_000), chunk: 100, interval: 0.05))
        let recorders = (0..<3).map { _ in FetchRecorder(expectation(description: "caller")) }
        let operations = recorders.map { $0.start(request("/drip"), on: queue) }
        // Cancel every caller once bytes flow (from another caller's data callback).
        let cancelled = Mutex(false)
        let triggerDone = expectation(description: "trigger")
        let trigger = queue.fetch(request("/drip"), onData: { _ in
            guard !cancelled.withLock({ value -> Bool in defer { value = true }; return value }) else { return }
            operations.forEach { $0.cancel() }
        }) { _ in triggerDone.fulfill() }
        wait(for: recorders.map(\.done), timeout: 10)
        flush(thread)
        XCTAssertEqual(thread.activity.current, 1, "the transfer goes on while one caller remains")
        trigger.cancel()
        wait(for: [triggerDone], timeout: 10)
        flush(thread)
        XCTAssertTrue(recorders.allSatisfy { $0.snapshot.error == .cancelled })
        XCTAssertEqual(thread.activity.current, 0)
        XCTAssertEqual(server.requestCount(for: "/drip"), 1)
    }

    func testDifferentHeadersOrCoalescingOffMeanSeparateTransfers() {
        server.route("/x", .bytes([1]).delayed(by: 0.05))
        var other = request("/x")
        other.headers["X-Variant"] = "b"
        let a = FetchRecorder(expectation(description: "a"))
        let b = FetchRecorder(expectation(description: "b"))
        a.start(request("/x"), on: queue)
        b.start(other, on: queue)
        wait(for: [a.done, b.done], timeout: 10)
        XCTAssertEqual(server.requestCount(for: "/x"), 2)

        let separate = FetchQueue(thread: thread, coalescesRequests: false)
        let c = FetchRecorder(expectation(description: "c"))
        let d = FetchRecorder(expectation(description: "d"))
        c.start(request("/x"), on: separate)
        d.start(request("/x"), on: separate)
        wait(for: [c.done, d.done], timeout: 10)
        XCTAssertEqual(server.requestCount(for: "/x"), 4)
    }
}
