import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// Review: the seam between "caller priorities follow waiting callers" and the manager-wide `DecodeBudget`.
final class PipelineBudgetReviewTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache


    /// A `.lowPriority` load joined by a `.highPriority` caller while its decode waits for budget must be
    /// granted the budget at the highest waiting caller's priority, i.e. before a `.normal` decode queued
    /// after it. The transform runs while the reservation is held (capacity 1: one decode at a time), so
    /// the order of transform calls is the order of budget grants.
    func testDecodeWaitingForBudgetFollowsAJoiningHighPriorityCaller() throws {
        let budget = DecodeBudget(capacity: 1)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        let jpeg = DecodeBombs.grayJPEG(width: 64, height: 64)
        let joined = fixture.serve("/joined", jpeg, contentType: "image/jpeg")
        let normal = fixture.serve("/normal", jpeg, contentType: "image/jpeg")
        let held = Mutex<DecodeBudget.Reservation?>(nil)
        budget.run(cost: 1, on: .global()) { reservation in held.withLock { $0 = reservation } }
        let order = Mutex<[String]>([])
        let transform = ImageTransform(id: "review-order") { image, url in
            order.withLock { $0.append(url.path) }
            return image
        }
        let finished = expectation(description: "all three finish")
        finished.expectedFulfillmentCount = 3
        let done: ImageCompletion = { _, _, _, stage, _ in if stage == .finished { finished.fulfill() } }

        // A low-priority prefetch waits for budget
        manager.requestImage(url: joined, options: [.ignoreDiskCache, .lowPriority], transform: transform, completion: done)
        waitUntil("low waits") { budget.waitingCount == 1 }
        // A high-priority caller joins the same in-flight work
        manager.requestImage(url: joined, options: [.ignoreDiskCache, .highPriority], transform: transform, completion: done)
        // A normal-priority decode queues after it
        manager.requestImage(url: normal, options: [.ignoreDiskCache], transform: transform, completion: done)
        waitUntil("both wait") { budget.waitingCount == 2 }

        held.withLock { $0 }?.release()
        wait(for: [finished], timeout: 20)
        XCTAssertEqual(order.withLock { $0 }, ["/joined", "/normal"],
                       "the joined (now high-priority) decode must be granted before the normal one")
    }
}
