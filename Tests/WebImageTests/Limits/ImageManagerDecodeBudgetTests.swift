import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// The manager's decode budget with real transfers and decodes: requests wait (without blocking an image
/// queue), start by priority, and a cancelled waiter completes with `.cancelled` exactly once.
final class ImageManagerDecodeBudgetTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    /// Completions by URL path.
    private final class Completions: Sendable {
        private let state = Mutex<[(String, ImageStage, Bool)]>([])
        func add(_ url: URL, _ stage: ImageStage, _ ok: Bool) { state.withLock { $0.append((url.path, stage, ok)) } }
        var all: [(String, ImageStage, Bool)] { state.withLock { $0 } }
        func count(_ path: String) -> Int { all.filter { $0.0 == path }.count }
    }


    func testWaitingDecodesStartByPriorityAndACancelledWaiterCompletesOnce() throws {
        // Given a budget of one byte (every decode runs alone), held by another user of the same budget
        let budget = DecodeBudget(capacity: 1)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        let jpeg = DecodeBombs.grayJPEG(width: 64, height: 64)
        let urls = ["/low", "/cancelled", "/high"].map { fixture.serve($0, jpeg, contentType: "image/jpeg") }
        let held = Mutex<DecodeBudget.Reservation?>(nil)
        budget.run(cost: 1, on: .global()) { reservation in held.withLock { $0 = reservation } }
        XCTAssertEqual(budget.runningCount, 1)
        let completions = Completions()
        let finished = expectation(description: "low and high finish")
        finished.expectedFulfillmentCount = 2
        let record: ImageCompletion = { image, url, _, stage, _ in
            completions.add(url, stage, image != nil)
            if stage == .finished { finished.fulfill() }
        }

        // When three more arrive (low, normal, high priority) and wait for budget
        manager.requestImage(url: urls[0], options: [.ignoreDiskCache, .lowPriority], completion: record)
        let cancelled = manager.requestImage(url: urls[1], options: [.ignoreDiskCache], completion: record)
        waitUntil("low and normal wait") { budget.waitingCount == 2 }
        manager.requestImage(url: urls[2], options: [.ignoreDiskCache, .highPriority], completion: record)
        waitUntil("three wait") { budget.waitingCount == 3 }

        // Then cancelling one while it waits takes it out of the queue and completes it once, at once
        cancelled.cancel()
        XCTAssertEqual(budget.waitingCount, 2)
        XCTAssertEqual(completions.all.map { "\($0.0) \($0.1)" }, ["/cancelled cancelled"])

        // And when the budget frees, the high-priority one decodes before the low one
        held.withLock { $0 }?.release()
        wait(for: [finished], timeout: 20)
        XCTAssertEqual(completions.all.map { "\($0.0) \($0.1) \($0.2)" },
                       ["/cancelled cancelled false", "/high finished true", "/low finished true"])
        XCTAssertEqual(completions.count("/cancelled"), 1, "exactly once")
        XCTAssertEqual(budget.bytesInUse, 0)
        XCTAssertEqual(budget.waitingCount, 0)
    }

    func testACompletionThatRequestsAgainGetsTheBudgetItGaveBack() throws {
        // Given a budget that fits one decode, and a completion that issues a new request from inside
        let budget = DecodeBudget(capacity: 64 * 64 * 4)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        let jpeg = DecodeBombs.grayJPEG(width: 64, height: 64)
        let first = fixture.serve("/first", jpeg, contentType: "image/jpeg")
        let second = fixture.serve("/second", jpeg, contentType: "image/jpeg")
        let done = expectation(description: "the nested request finished")
        let calls = Mutex(0)
        manager.requestImage(url: first, options: [.ignoreDiskCache]) { image, _, _, stage, _ in
            guard stage == .finished else { return }
            XCTAssertNotNil(image)
            // When: from the first completion (on an image queue), a second request
            manager.requestImage(url: second, options: [.ignoreDiskCache]) { image, _, _, stage, _ in
                guard stage != .progress else { return }
                calls.withLock { $0 += 1 }
                XCTAssertEqual(stage, .finished)
                XCTAssertEqual(image?.width, 64)
                done.fulfill()
            }
        }
        // Then it decodes (the first gave its budget back before completing) and completes once
        wait(for: [done], timeout: 20)
        XCTAssertEqual(calls.withLock { $0 }, 1)
        XCTAssertEqual(budget.bytesInUse, 0)
        XCTAssertEqual(budget.waitingCount, 0)
    }
}
