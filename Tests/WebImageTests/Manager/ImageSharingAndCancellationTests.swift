import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Identical requests share work; cancellation completes exactly once.
final class ImageSharingAndCancellationTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    func testIdenticalRequestsShareOneTransferAndOneDecode() throws {
        fixture.server.route("/shared.png", HTTPTestResponse.bytes(try TestImages.png()).delayed(by: 0.3))
        let url = fixture.server.url("/shared.png")
        let images = Mutex<[ObjectIdentifier]>([])
        let done = expectation(description: "all")
        done.expectedFulfillmentCount = 20
        for _ in 0..<20 {
            fixture.manager.requestImage(url: url) { image, _, source, stage, _ in
                XCTAssertEqual(stage, .finished)
                XCTAssertEqual(source, .remote)
                if let image { images.withLock { $0.append(ObjectIdentifier(image)) } }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(fixture.server.requestCount(for: "/shared.png"), 1)
        XCTAssertEqual(Set(images.withLock { $0 }).count, 1, "one decode: every caller gets the same Image")
    }

    func testCancellingOneCallerLeavesTheOthers() throws {
        fixture.server.route("/two.png", HTTPTestResponse.bytes(try TestImages.png()).delayed(by: 0.3))
        let url = fixture.server.url("/two.png")
        let stages = Mutex<[String: [ImageStage]]>([:])
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        let a = fixture.manager.requestImage(url: url) { _, _, _, stage, _ in
            stages.withLock { $0["a", default: []].append(stage) }; done.fulfill()
        }
        fixture.manager.requestImage(url: url) { _, _, _, stage, _ in
            stages.withLock { $0["b", default: []].append(stage) }; done.fulfill()
        }
        a.cancel()
        a.cancel() // twice: still one completion
        wait(for: [done], timeout: 10)
        XCTAssertEqual(stages.withLock { $0 }, ["a": [.cancelled], "b": [.finished]])
        XCTAssertTrue(a.isCancelled)
        XCTAssertEqual(fixture.server.requestCount(for: "/two.png"), 1)
    }

    func testCancellingTheLastCallerStopsTheTransfer() throws {
        let data = try TestImages.jpeg(width: 800, height: 600)
        fixture.server.route("/slow.jpg", .drip(data, chunk: 1_000, interval: 0.05))
        let url = fixture.server.url("/slow.jpg")
        let cancelled = expectation(description: "cancelled")
        let started = expectation(description: "bytes arrived")
        started.assertForOverFulfill = false
        let operation = fixture.manager.requestImage(url: url, progress: { received, _ in
            if received > 0 { started.fulfill() }
        }) { _, _, _, stage, _ in
            XCTAssertEqual(stage, .cancelled)
            cancelled.fulfill()
        }
        wait(for: [started], timeout: 10)
        operation.cancel()
        wait(for: [cancelled], timeout: 5)
        // The transfer is gone: the activity counter drops to zero.
        let deadline = Date().addingTimeInterval(5)
        while fixture.manager.networkActivityCount > 0, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(fixture.manager.networkActivityCount, 0)
        XCTAssertFalse(try fixture.manager.cache!.containsImage(forKey: url.absoluteString))
    }

    /// 10,000 requests over 50 URLs, 40 % cancelled at random moments: every request completes exactly once.
    func testCancellationStormCompletesEveryRequestExactlyOnce() throws {
        for i in 0..<50 {
            fixture.server.route("/storm\(i).png", HTTPTestResponse.bytes(try TestImages.png(width: 16, height: 16, seed: i)).delayed(by: Double(i % 5) * 0.01))
        }
        let manager = ImageManager(cache: nil, queue: fixture.queue)
        let counts = Mutex<[Int]>(Array(repeating: 0, count: 10_000))
        let finished = Mutex(0)
        let all = expectation(description: "all complete")
        var operations: [ImageOperation] = []
        operations.reserveCapacity(10_000)
        for i in 0..<10_000 {
            let url = fixture.server.url("/storm\(i % 50).png")
            operations.append(manager.requestImage(url: url, options: i % 3 == 0 ? [.refreshImageCache] : []) { _, _, _, stage, _ in
                guard stage != .progress else { return }
                counts.withLock { $0[i] += 1 }
                if finished.withLock({ $0 += 1; return $0 }) == 10_000 { all.fulfill() }
            })
            if i % 5 < 2 {
                let operation = operations[i]
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0...30))) { operation.cancel() }
            }
        }
        wait(for: [all], timeout: 120)
        let perRequest = counts.withLock { $0 }
        XCTAssertEqual(perRequest.filter { $0 != 1 }.count, 0, "every request completes exactly once")
    }
}
