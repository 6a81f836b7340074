import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// `DecodeBudget` from many threads, run under ThreadSanitizer by `make test`: random costs and priorities,
/// works that release on other queues and sometimes request again from inside, and cancels racing the grants.
/// Every request ends exactly once (its work ran, or its cancel handler did), the capacity holds whenever more
/// than one decode runs, and the budget ends empty. Seed: `WEBIMAGE_STRESS_SEED` (default 7), printed on failure.
final class DecodeBudgetStressTests: XCTestCase {
    func testConcurrentRunsReleasesAndCancels() {
        let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_STRESS_SEED"] ?? "") ?? 7
        let budget = DecodeBudget(capacity: 1_000)
        let queues = (0..<4).map { DispatchQueue(label: "budget-stress-\($0)") }
        let workers = 4, perWorker = 1_500
        let total = workers * perWorker
        let ends = Mutex<[Int]>(Array(repeating: 0, count: total))
        let nested = Mutex(0)
        let violations = Mutex(0)
        let cancels = Mutex(0)
        let all = expectation(description: "every request ended")
        all.expectedFulfillmentCount = total
        let nestedGroup = DispatchGroup()
        let nestedStarted = Mutex(0)
        // The decodes running as the test sees them (a subset of what the budget has granted at any moment).
        let running = Mutex((bytes: 0, count: 0))
        @Sendable func end(_ n: Int) {
            ends.withLock { $0[n] += 1 }
            all.fulfill()
        }
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var rng = SplitMix64(seed: seed &+ UInt64(worker))
            for i in 0..<perWorker {
                let n = worker * perWorker + i
                let cost = rng.next(upTo: 5) == 0 ? 1_500 : rng.next(upTo: 400)
                let queue = queues[rng.next(upTo: queues.count)]
                let releaseQueue = queues[rng.next(upTo: queues.count)]
                let reenters = n % 10 == 0
                let ticket = budget.run(cost: cost, priority: rng.next(upTo: 5), on: queue, onCancel: { cancels.withLock { $0 += 1 }; end(n) }) { reservation in
                    let over = running.withLock { r -> Bool in
                        r.bytes += cost
                        r.count += 1
                        return r.count > 1 && r.bytes > budget.capacity
                    }
                    if over { violations.withLock { $0 += 1 } }
                    if reenters {
                        nestedStarted.withLock { $0 += 1 }
                        nestedGroup.enter()
                        budget.run(cost: 100, on: releaseQueue) { inner in
                            nested.withLock { $0 += 1 }
                            inner.release()
                            nestedGroup.leave()
                        }
                    }
                    releaseQueue.async {
                        running.withLock { $0.bytes -= cost; $0.count -= 1 }
                        reservation.release()
                        end(n)
                    }
                }
                if rng.next(upTo: 3) == 0 {
                    let delay = rng.next(upTo: 2_000)
                    DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) { ticket.cancel() }
                }
            }
        }
        wait(for: [all], timeout: 120)
        XCTAssertEqual(nestedGroup.wait(timeout: .now() + 60), .success, "seed \(seed): nested requests never ran")
        for queue in queues { queue.sync {} }
        let counts = ends.withLock { $0 }
        XCTAssertTrue(counts.allSatisfy { $0 == 1 }, "seed \(seed): a request ended \(counts.filter { $0 != 1 }.count) times wrongly")
        XCTAssertEqual(violations.withLock { $0 }, 0, "seed \(seed): capacity exceeded with several running")
        XCTAssertEqual(nested.withLock { $0 }, nestedStarted.withLock { $0 }, "seed \(seed)")
        XCTAssertGreaterThan(nested.withLock { $0 }, 0, "seed \(seed)")
        XCTAssertGreaterThan(cancels.withLock { $0 }, 0, "seed \(seed): no cancel landed while waiting")
        XCTAssertEqual(budget.bytesInUse, 0, "seed \(seed)")
        XCTAssertEqual(budget.runningCount, 0, "seed \(seed)")
        XCTAssertEqual(budget.waitingCount, 0, "seed \(seed)")
    }
}
