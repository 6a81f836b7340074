@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// 10,000 requests, 40 % cancelled at random moments (at once, after a random delay from another thread, from
/// the response callback, from a data callback): every request completes exactly once, and the process's open
/// file descriptors return to their baseline.
final class CancellationStormTests: XCTestCase {
    func testTenThousandRequestsFortyPercentCancelled() throws {
        // Dispatch opens its timer/event descriptors once per process on first use: not a leak, so warm it up.
        let warm = expectation(description: "dispatch timers ready")
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(10)) { warm.fulfill() }
        wait(for: [warm], timeout: 5)
        let baseline = try openFileDescriptorTargets()
        try runStorm(count: 10_000, seed: 0x5eed)
        let after = try openFileDescriptorTargets()
        XCTAssertEqual(after.count, baseline.count, "sockets, pipes and epoll descriptors all closed")
        XCTAssertEqual(after.filter { $0.hasPrefix("socket:") }.count, baseline.filter { $0.hasPrefix("socket:") }.count)
        XCTAssertEqual(CurlEasyHandle.liveCount.load(ordering: .relaxed), 0)
    }

    private func runStorm(count: Int, seed: UInt64) throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        CancellationStormPlan.installRoutes(on: server)
        let thread = NetworkThread()
        defer { thread.stop(); thread.join() }
        let queue = FetchQueue(thread: thread, maxConcurrentTransfers: 16)
        let plan = CancellationStormPlan(count: count, cancelledFraction: 0.4, seed: seed)

        let completions = Mutex([Int](repeating: 0, count: count))
        let outcomes = Mutex((succeeded: 0, cancelled: 0, wrongBody: 0, otherErrors: [FetchError]()))
        let allDone = expectation(description: "every request completed")
        allDone.expectedFulfillmentCount = count
        allDone.assertForOverFulfill = true
        var generator = SplitMix64(seed: seed ^ 0xffff)

        for index in 0..<count {
            let mode = plan.modes[index]
            let slot = Mutex<FetchOperation?>(nil)
            let request = FetchRequest(url: server.url("/storm?i=\(index)"), timeout: 30)
            let operation = queue.fetch(request, onResponse: { _ in
                if mode == .fromResponseCallback { slot.withLock { $0 }?.cancel() }
            }, onData: { _ in
                if mode == .fromDataCallback { slot.withLock { $0 }?.cancel() }
            }) { result in
                completions.withLock { $0[index] += 1 }
                outcomes.withLock { outcome in
                    switch result {
                    case .success(let fetched):
                        outcome.succeeded += 1
                        if fetched.body != CancellationStormPlan.expectedBody(index) { outcome.wrongBody += 1 }
                    case .failure(.cancelled): outcome.cancelled += 1
                    case .failure(let error): outcome.otherErrors.append(error)
                    }
                }
                allDone.fulfill()
            }
            slot.withLock { $0 = operation }
            switch mode {
            case .immediately:
                operation.cancel()
            case .afterRandomDelay:
                let delay = Int(generator.next() % 20_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) { operation.cancel() }
            default:
                break
            }
        }
        wait(for: [allDone], timeout: 120)
        flush(thread)

        let counts = completions.withLock { $0 }
        XCTAssertEqual(counts.filter { $0 != 1 }.count, 0, "every request completed exactly once")
        let outcome = outcomes.withLock { $0 }
        XCTAssertEqual(outcome.wrongBody, 0)
        XCTAssertEqual(outcome.otherErrors, [])
        XCTAssertEqual(outcome.succeeded + outcome.cancelled, count)
        let plannedCancels = plan.modes.filter { $0 != .none }.count
        XCTAssertGreaterThanOrEqual(outcome.cancelled, plannedCancels / 2, "most planned cancels took effect")
        XCTAssertLessThanOrEqual(outcome.cancelled, plannedCancels)
        XCTAssertEqual(thread.activity.current, 0)
    }
}
