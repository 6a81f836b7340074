import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// Review: cancellation and manager release racing decodes that wait for `DecodeBudget`.
final class PipelineBudgetRaceReviewTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache


    func testManagerReleasedWhileDecodesWaitForBudgetStillCompletesEachOnce() throws {
        let budget = DecodeBudget(capacity: 1)
        var manager: ImageManager? = ImageManager(cache: try ImageCache(path: fixture.directory.path),
                                                  queue: fixture.queue, decodeBudget: budget)
        let jpeg = DecodeBombs.grayJPEG(width: 24, height: 24)
        let held = Mutex<DecodeBudget.Reservation?>(nil)
        budget.run(cost: 1, on: .global()) { reservation in held.withLock { $0 = reservation } }
        let calls = Mutex<[String: Int]>([:])
        let finished = expectation(description: "all finish")
        finished.expectedFulfillmentCount = 4
        for index in 0..<4 {
            let url = fixture.serve("/released-\(index)", jpeg, contentType: "image/jpeg")
            manager!.requestImage(url: url, options: [.ignoreDiskCache]) { image, _, _, stage, _ in
                guard stage != .progress else { return }
                XCTAssertEqual(stage, .finished)
                XCTAssertNotNil(image)
                calls.withLock { $0[url.path, default: 0] += 1 }
                finished.fulfill()
            }
        }
        waitUntil("four wait") { budget.waitingCount == 4 }
        manager = nil
        held.withLock { $0 }?.release()
        wait(for: [finished], timeout: 20)
        XCTAssertEqual(calls.withLock { $0 }.values.sorted(), [1, 1, 1, 1])
        waitUntil("budget idle") { budget.runningCount == 0 && budget.bytesInUse == 0 && budget.waitingCount == 0 }
    }

    /// Cancels race the budget being released: every request completes exactly once (finished or cancelled),
    /// the budget ends idle, and a later decode still gets budget.
    func testCancelRacingBudgetGrantsCompletesOnceAndLeaksNoBudget() throws {
        let seed = ProcessInfo.processInfo.environment["REVIEW_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let budget = DecodeBudget(capacity: 24 * 24 * 4 * 2)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        let jpeg = DecodeBombs.grayJPEG(width: 24, height: 24)
        for round in 0..<5 {
            let held = Mutex<DecodeBudget.Reservation?>(nil)
            budget.run(cost: Int.max / 2, on: .global()) { reservation in held.withLock { $0 = reservation } }
            let calls = Mutex<[String: Int]>([:])
            let count = 12
            let done = expectation(description: "round \(round)")
            done.expectedFulfillmentCount = count
            var operations: [ImageOperation] = []
            for index in 0..<count {
                let url = fixture.serve("/race-\(round)-\(index)", jpeg, contentType: "image/jpeg")
                operations.append(manager.requestImage(url: url, options: [.ignoreDiskCache]) { _, _, _, stage, _ in
                    guard stage != .progress else { return }
                    calls.withLock { $0[url.path, default: 0] += 1 }
                    done.fulfill()
                })
            }
            waitUntil("round \(round): all wait") { budget.waitingCount == count }
            let toCancel = operations.filter { _ in rng.next() % 2 == 0 }
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) { for operation in toCancel { operation.cancel() } }
            DispatchQueue.global().async(group: group) { held.withLock { $0 }?.release() }
            group.wait()
            wait(for: [done], timeout: 20)
            XCTAssertEqual(calls.withLock { $0 }.values.sorted(), Array(repeating: 1, count: count), "seed \(seed) round \(round)")
            waitUntil("seed \(seed) round \(round): budget idle") {
                budget.runningCount == 0 && budget.bytesInUse == 0 && budget.waitingCount == 0
            }
        }
    }
}
