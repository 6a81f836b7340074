@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// Regressions of the fetch queue found by review of f51e949: recursion on synchronous failures, a
/// suspend/resume race, stale entries and stop handlers that piled up, unsupported schemes that queued.
final class FetchQueueRegressionTests: FetchTestCase {
    /// Records each operation's completions (by index) to check "exactly once".
    private final class Completions: Sendable {
        let counts: Mutex<[Int: Int]> = Mutex([:])
        let errors: Mutex<[Int: FetchError]> = Mutex([:])
        let all = DispatchSemaphore(value: 0)
        let total: Int
        init(total: Int) { self.total = total }
        func record(_ index: Int, _ result: Result<FetchResult, FetchError>) {
            let finished = counts.withLock { c -> Bool in
                c[index, default: 0] += 1
                return c.count == total && c[index] == 1
            }
            if case .failure(let error) = result { errors.withLock { $0[index] = error } }
            if finished { all.signal() }
        }
    }

    /// A suspended queue holding 10,000 requests whose transfers fail synchronously when started resumes
    /// without recursing (it used to overflow the network thread's stack), and each completes exactly once.
    func testSynchronousFailuresOnResumeDoNotRecurse() {
        let count = 10_000
        queue.suspend()
        _ = queue.inspectCore { core, _ in
            core.makeTransfer = { request, _, _ in .failure(.invalidURL(request.url.absoluteString)) }
        }
        let completions = Completions(total: count)
        for index in 0..<count {
            queue.fetch(request("/never?\(index)")) { completions.record(index, $0) }
        }
        queue.resume()
        XCTAssertEqual(completions.all.wait(timeout: .now() + 60), .success, "every request completes")
        flush(thread)
        XCTAssertEqual(completions.counts.withLock { $0.count }, count)
        XCTAssertTrue(completions.counts.withLock { $0.values.allSatisfy { $0 == 1 } }, "exactly once each")
        XCTAssertTrue(completions.errors.withLock { $0.values.allSatisfy { if case .invalidURL = $0 { true } else { false } } })
        XCTAssertEqual(server.totalRequestCount, 0)
    }

    /// `data:` URIs (scraped from HTML) on a suspended queue: each completes at once with its bytes, without
    /// queueing, and resuming is uneventful (10,000 of them used to crash the network thread on resume). Other
    /// schemes fail at once with `.invalidURL`.
    func testUnsupportedSchemesFailAtOnceWithoutQueueing() {
        let count = 10_000
        queue.suspend()
        let completions = Completions(total: count)
        for index in 0..<count {
            let url = URL(string: "data:image/png;base64,\(Data("image \(index)".utf8).base64EncodedString())")!
            queue.fetch(FetchRequest(url: url)) { completions.record(index, $0) }
        }
        // Completed before resuming: nothing was queued.
        XCTAssertEqual(completions.all.wait(timeout: .now() + 20), .success, "completed at once, while suspended")
        XCTAssertEqual(queue.inspectCore { core, _ in core.pendingEntryCount }, 0, "nothing queued")
        queue.resume()
        flush(thread)
        XCTAssertTrue(completions.counts.withLock { $0.values.allSatisfy { $0 == 1 } }, "exactly once each")
        XCTAssertNil(completions.errors.withLock { $0[7] }, "decoded, not refused")
        for scheme in ["ftp://example.com/a.png", "gopher://example.com/", "mailto:a@example.com"] {
            let done = expectation(description: scheme)
            queue.fetch(FetchRequest(url: URL(string: scheme)!)) { result in
                if case .failure(.invalidURL(scheme)) = result { done.fulfill() }
            }
            wait(for: [done], timeout: 1)
        }
    }

    /// `suspend()` racing `resume()`, and the limit and order setters racing each other, always leave the core
    /// agreeing with the settings, and a queue that is not suspended runs its work.
    func testRacingSettersLeaveCoreInAgreementWithSettings() {
        server.route("/r", .bytes([1]))
        let rounds = 300
        var mismatches: [String] = []
        let queue: FetchQueue = self.queue
        for iteration in 0..<rounds {
            // Four threads (on fewer cores: they get preempted between the two steps of a setter) write opposite
            // settings; whichever write comes last must be what the core applies.
            Self.race(threads: 8) { side in
                for _ in 0..<5 {
                    if side % 2 == 0 {
                        queue.suspend(); queue.maxConcurrentTransfers = 1; queue.order = .lifo
                    } else {
                        queue.resume(); queue.maxConcurrentTransfers = 3; queue.order = .fifo
                    }
                }
            }
            let expected = (queue.isSuspended, queue.maxConcurrentTransfers, queue.order == .lifo)
            let core = queue.inspectCore { core, _ in (core.isSuspended, core.maxConcurrent, core.isLIFO) }
            if let core, core != expected {
                mismatches.append("iteration \(iteration): settings \(expected), core \(core)")
            }
            if !mismatches.isEmpty { break }
        }
        XCTAssertEqual(mismatches, [], "the core must follow the last setting written")
        // And the queue does its work when not suspended.
        queue.resume()
        let recorder = FetchRecorder(expectation(description: "runs"))
        recorder.start(request("/r"), on: queue)
        wait(for: [recorder.done], timeout: 10)
        XCTAssertEqual(recorder.snapshot.body, Data([1]))
    }

    /// Runs `body` on `threads` new threads at once (released together) and waits for all of them.
    static func race(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for index in 0..<threads {
            ready.enter()
            finished.enter()
            Thread {
                ready.leave()
                go.wait()
                body(index)
                finished.leave()
            }.start()
        }
        ready.wait()
        for _ in 0..<threads { go.signal() }
        finished.wait()
    }

    /// Requests cancelled while their queue is suspended do not stay in the pending heap.
    func testCancelledRequestsLeaveTheSuspendedQueue() {
        queue.suspend()
        let count = 1_000
        let completions = Completions(total: count)
        let operations = (0..<count).map { index in
            queue.fetch(request("/c?\(index)")) { completions.record(index, $0) }
        }
        for operation in operations { operation.cancel() }
        XCTAssertEqual(completions.all.wait(timeout: .now() + 20), .success)
        let entries = queue.inspectCore { core, _ in core.pendingEntryCount } ?? -1
        XCTAssertLessThan(entries, 100, "stale entries are swept (\(entries) of \(count) left)")
        XCTAssertGreaterThanOrEqual(entries, 0)
        queue.resume()
    }

    /// A network thread keeps one stop handler per live queue, not one per queue ever created.
    func testStopHandlersOfReleasedQueuesAreForgotten() {
        for _ in 0..<200 { _ = FetchQueue(thread: thread) }
        flush(thread)
        var count = queue.inspectCore { _, loop in loop.stopHandlerCount } ?? -1
        let deadline = Date().addingTimeInterval(10)
        while count > 1, Date() < deadline { // each core's removal is submitted from its deinit
            flush(thread)
            count = queue.inspectCore { _, loop in loop.stopHandlerCount } ?? -1
        }
        XCTAssertEqual(count, 1, "only this test's own queue")
    }

    /// A caller raising its priority moves its queued transfer ahead; a coalesced transfer runs at the highest
    /// priority of the callers still waiting (it drops back when the high one leaves).
    func testPriorityFollowsWaitingCallers() {
        server.route("/p", .bytes([1]))
        queue.maxConcurrentTransfers = 1
        queue.suspend()
        var low = request("/p?x")
        low.priority = .low
        let raised = FetchRecorder(expectation(description: "x"))
        let operation = raised.start(low, on: queue)
        let normals = (0..<3).map { index -> FetchRecorder in
            let recorder = FetchRecorder(expectation(description: "n\(index)"))
            recorder.start(request("/p?n\(index)"), on: queue)
            return recorder
        }
        operation.priority = .high
        XCTAssertEqual(operation.priority, .high)
        // Another low request, joined by a high caller that then leaves: it goes back to the end.
        var other = request("/p?y")
        other.priority = .low
        let stays = FetchRecorder(expectation(description: "y"))
        stays.start(other, on: queue)
        var joining = other
        joining.priority = .high
        let leaving = FetchRecorder(expectation(description: "y-high"))
        leaving.start(joining, on: queue).cancel()
        queue.resume()
        wait(for: [raised.done, stays.done, leaving.done] + normals.map(\.done), timeout: 10)
        XCTAssertEqual(server.requests(for: "/p").map(\.uri), ["/p?x", "/p?n0", "/p?n1", "/p?n2", "/p?y"])
    }
}
