import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// `DecodeBudget` alone: admission, order, cancellation, exactly-once, re-entrancy.
final class DecodeBudgetTests: XCTestCase {
    private let queue = DispatchQueue(label: "decode-budget-tests")

    /// Keeps a reservation to release later.
    private final class Holder: Sendable {
        private let reservation = Mutex<DecodeBudget.Reservation?>(nil)
        func set(_ r: DecodeBudget.Reservation) { reservation.withLock { $0 = r } }
        func release() { reservation.withLock { $0 }?.release() }
    }

    /// Records events in order.
    private final class Log: Sendable {
        private let events = Mutex<[String]>([])
        func add(_ event: String) { events.withLock { $0.append(event) } }
        var all: [String] { events.withLock { $0 } }
    }

    func testADecodeThatFitsRunsAtOnceOnTheCallingThread() {
        let budget = DecodeBudget(capacity: 100)
        let ran = Mutex(false)
        let ticket = budget.run(cost: 60, on: queue) { reservation in
            ran.withLock { $0 = true }
            XCTAssertEqual(budget.bytesInUse, 60)
            reservation.release()
            reservation.release() // a second release does nothing
        }
        XCTAssertTrue(ran.withLock { $0 })
        XCTAssertFalse(ticket.cancel(), "already started")
        XCTAssertEqual(budget.bytesInUse, 0)
        XCTAssertEqual(budget.runningCount, 0)
    }

    func testWaitersStartHighestPriorityFirstAndFIFOWithinAPriority() {
        let budget = DecodeBudget(capacity: 100)
        let log = Log()
        let holder = Holder()
        budget.run(cost: 100, on: queue) { holder.set($0) }
        let done = expectation(description: "all four ran")
        done.expectedFulfillmentCount = 4
        for (name, priority) in [("low", 1), ("normal-1", 2), ("high", 3), ("normal-2", 2)] {
            budget.run(cost: 100, priority: priority, on: queue) { reservation in
                log.add(name)
                XCTAssertEqual(budget.runningCount, 1, "each one fills the budget: one at a time")
                reservation.release()
                done.fulfill()
            }
        }
        XCTAssertEqual(budget.waitingCount, 4)
        XCTAssertEqual(log.all, [], "nothing runs while the budget is full")
        holder.release()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(log.all, ["high", "normal-1", "normal-2", "low"])
        XCTAssertEqual(budget.bytesInUse, 0)
    }

    func testUpdatingAWaitersPriorityMovesItAndUpdatingAStartedOneDoesNothing() {
        let budget = DecodeBudget(capacity: 100)
        let log = Log()
        let holder = Holder()
        budget.run(cost: 100, on: queue) { holder.set($0) }
        let done = expectation(description: "all three ran")
        done.expectedFulfillmentCount = 3
        var tickets: [String: DecodeBudget.Ticket] = [:]
        for (name, priority) in [("normal-1", 2), ("normal-2", 2), ("prefetch", 1)] {
            tickets[name] = budget.run(cost: 100, priority: priority, on: queue) { reservation in
                log.add(name)
                reservation.release()
                done.fulfill()
            }
        }
        // A high-priority caller joined the prefetch: it moves ahead of both normal waiters.
        tickets["prefetch"]?.updatePriority(3)
        // Its own priority again: nothing moves (it keeps its place among its equals).
        tickets["normal-1"]?.updatePriority(2)
        XCTAssertEqual(log.all, [], "moving a waiter starts nothing while the budget is full")
        holder.release()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(log.all, ["prefetch", "normal-1", "normal-2"])
        tickets["prefetch"]?.updatePriority(0) // started and finished: nothing to move
        XCTAssertEqual(budget.waitingCount, 0)
        XCTAssertEqual(budget.bytesInUse, 0)
    }

    func testSmallerDecodesShareTheBudgetAndAStrictHeadBlocksThoseBehindIt() {
        let budget = DecodeBudget(capacity: 100)
        let a = Holder(), b = Holder()
        budget.run(cost: 40, on: queue) { a.set($0) }
        budget.run(cost: 40, on: queue) { b.set($0) }
        XCTAssertEqual(budget.runningCount, 2)
        let big = expectation(description: "the 60-byte decode runs")
        let small = expectation(description: "the 10-byte decode runs after it")
        let log = Log()
        budget.run(cost: 60, on: queue) { r in log.add("big"); r.release(); big.fulfill() }
        budget.run(cost: 10, on: queue) { r in log.add("small"); r.release(); small.fulfill() }
        XCTAssertEqual(budget.waitingCount, 2, "10 bytes would fit, but the 60-byte head waits first")
        a.release()
        wait(for: [big], timeout: 10)
        b.release()
        wait(for: [small], timeout: 10)
        XCTAssertEqual(log.all, ["big", "small"])
    }

    func testADecodeLargerThanTheWholeBudgetRunsAloneWhenNothingElseIsInFlight() {
        let clean = DecodeBudget(capacity: 100)
        let ranAlone = Mutex(false)
        clean.run(cost: 1_000, on: queue) { reservation in
            ranAlone.withLock { $0 = clean.runningCount == 1 }
            reservation.release()
        }
        XCTAssertTrue(ranAlone.withLock { $0 })
        let holder = Holder()
        clean.run(cost: 10, on: queue) { holder.set($0) }
        let later = expectation(description: "the big one runs once the small one is done")
        clean.run(cost: 1_000, on: queue) { reservation in
            XCTAssertEqual(clean.runningCount, 1)
            reservation.release()
            later.fulfill()
        }
        XCTAssertEqual(clean.waitingCount, 1)
        holder.release()
        wait(for: [later], timeout: 10)
    }

    func testCancellingAWaiterRemovesItAndCallsItsCancelHandlerExactlyOnce() {
        let budget = DecodeBudget(capacity: 100)
        let holder = Holder()
        budget.run(cost: 100, on: queue) { holder.set($0) }
        let cancels = Mutex(0)
        let cancelled = budget.run(cost: 50, on: queue, onCancel: { cancels.withLock { $0 += 1 } }) { _ in
            XCTFail("a cancelled waiter never runs")
        }
        let next = expectation(description: "the waiter behind it runs")
        budget.run(cost: 50, on: queue) { r in r.release(); next.fulfill() }
        XCTAssertEqual(budget.waitingCount, 2)
        XCTAssertTrue(cancelled.cancel())
        XCTAssertFalse(cancelled.cancel(), "only once")
        XCTAssertEqual(cancels.withLock { $0 }, 1)
        XCTAssertEqual(budget.waitingCount, 1)
        holder.release()
        wait(for: [next], timeout: 10)
        queue.sync {} // anything the budget dispatched has run
        XCTAssertEqual(cancels.withLock { $0 }, 1)
        XCTAssertEqual(budget.bytesInUse, 0)
    }

    func testAReentrantWorkThatRequestsAgainNeitherDeadlocksNorLosesBudget() {
        let budget = DecodeBudget(capacity: 100)
        let done = expectation(description: "the nested decode ran")
        let queue = self.queue
        budget.run(cost: 100, on: queue) { outer in
            // Still holding everything: the nested request waits (it must not block or deadlock).
            budget.run(cost: 100, on: queue) { inner in
                // And from inside a dispatched work, once more, releasing first.
                inner.release()
                budget.run(cost: 100, on: queue) { last in
                    last.release()
                    done.fulfill()
                }
            }
            XCTAssertEqual(budget.waitingCount, 1)
            outer.release()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(budget.bytesInUse, 0)
        XCTAssertEqual(budget.runningCount, 0)
        XCTAssertEqual(budget.waitingCount, 0)
    }

    func testEstimatedCostReadsTheHeaderAndCountsAThumbnailByWhatItAllocates() throws {
        let jpeg = DecodeBombs.grayJPEG(width: 4000, height: 2000)
        XCTAssertEqual(DecodeBudget.estimatedCost(of: jpeg, options: DecodeOptions()), 4000 * 2000 * 4)
        // A 200-pixel thumbnail: the 1/8 DCT-scaled image (500 × 250, at least 2× the thumbnail) plus the 200 × 100
        // thumbnail.
        let thumbnail = DecodeBudget.estimatedCost(of: jpeg, options: DecodeOptions(maxPixelSize: 200))
        XCTAssertEqual(thumbnail, 200 * 100 * 4 + 500 * 250 * 4)
        // 2000 × 1000 to 200: 1/8 (250 × 125) would leave the Lanczos less than 2×, so the decoder scales by 1/4.
        let half = DecodeBombs.grayJPEG(width: 2000, height: 1000)
        XCTAssertEqual(DecodeBudget.estimatedCost(of: half, options: DecodeOptions(maxPixelSize: 200)), 200 * 100 * 4 + 500 * 250 * 4)
        // Over the limits: refused before allocating, so it costs nothing.
        XCTAssertEqual(DecodeBudget.estimatedCost(of: jpeg, options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 1000))), 0)
        XCTAssertEqual(DecodeBudget.estimatedCost(of: Data([1, 2, 3]), options: DecodeOptions()), 0)
    }
}
