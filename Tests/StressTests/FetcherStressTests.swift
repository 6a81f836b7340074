import Foundation
import TestSupport
import WebImage
import XCTest

/// The fetcher under ThreadSanitizer (`make test`): submits and cancels from many threads at once while the
/// network thread runs transfers, queue settings change underneath, and private network threads start and stop.
final class FetcherStressTests: XCTestCase {
    /// A bounded cancellation storm with concurrent submitters: every request completes exactly once.
    func testConcurrentSubmitAndCancelStorm() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        CancellationStormPlan.installRoutes(on: server)
        let thread = NetworkThread()
        defer { thread.stop(); thread.join() }
        let queue = FetchQueue(thread: thread, maxConcurrentTransfers: 8)
        let count = 1_200
        let plan = CancellationStormPlan(count: count, cancelledFraction: 0.4, seed: 42)
        let completions = Mutex([Int](repeating: 0, count: count))
        let wrong = Mutex(0)
        let allDone = expectation(description: "all complete")
        allDone.expectedFulfillmentCount = count

        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var generator = SplitMix64(seed: UInt64(worker))
            for index in stride(from: worker, to: count, by: 4) {
                let mode = plan.modes[index]
                let slot = Mutex<FetchOperation?>(nil)
                let request = FetchRequest(url: server.url("/storm?i=\(index)"), timeout: 30)
                let operation = queue.fetch(request, onResponse: { _ in
                    if mode == .fromResponseCallback { slot.withLock { $0 }?.cancel() }
                }, onData: { _ in
                    if mode == .fromDataCallback { slot.withLock { $0 }?.cancel() }
                }) { result in
                    completions.withLock { $0[index] += 1 }
                    switch result {
                    case .success(let fetched) where fetched.body == CancellationStormPlan.expectedBody(index): break
                    case .failure(.cancelled): break
                    default: wrong.withLock { $0 += 1 }
                    }
                    allDone.fulfill()
                }
                slot.withLock { $0 = operation }
                switch mode {
                case .immediately: operation.cancel()
                case .afterRandomDelay:
                    let delay = Int(generator.next() % 10_000)
                    DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) { operation.cancel() }
                default: break
                }
                _ = operation.state // read state concurrently with the network thread's updates
            }
        }
        wait(for: [allDone], timeout: 120)
        XCTAssertEqual(completions.withLock { $0.filter { $0 != 1 }.count }, 0)
        XCTAssertEqual(wrong.withLock { $0 }, 0)
    }

    /// Settings, suspend/resume, cancel-all and the activity counter used from many threads during transfers.
    func testQueueControlsFromManyThreads() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        server.route("/x", .bytes([UInt8](repeating: 1, count: 2_000)))
        let thread = NetworkThread()
        defer { thread.stop(); thread.join() }
        let queue = FetchQueue(thread: thread)
        let observation = thread.activity.observe { _ in }
        defer { observation.cancel() }
        let count = 400
        let done = expectation(description: "all complete")
        done.expectedFulfillmentCount = count
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in stride(from: worker, to: count, by: 4) {
                queue.fetch(FetchRequest(url: server.url("/x?\(index % 50)"))) { _ in done.fulfill() }
                switch index % 40 {
                case 0: queue.suspend()
                case 10: queue.resume()
                case 20: queue.maxConcurrentTransfers = 1 + index % 7
                case 30: queue.order = index % 3 == 0 ? .lifo : .fifo
                default: _ = (queue.isSuspended, queue.maxConcurrentTransfers, thread.activity.current)
                }
            }
        }
        queue.resume()
        queue.cancelAll()
        wait(for: [done], timeout: 60)
    }

    /// Private network threads started and stopped while other threads submit work to them.
    func testStartStopWithConcurrentPerform() {
        for _ in 0..<20 {
            let thread = NetworkThread()
            let ran = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<50 { thread.perform { ran.withLock { $0 += 1 } } }
            }
            thread.stop()
            thread.join()
            XCTAssertEqual(ran.withLock { $0 }, 200, "work accepted before stop runs before the thread exits")
            XCTAssertFalse(thread.perform {})
        }
    }
}
