@testable import WebImage
import Fetcher
import Foundation
import TestSupport
import XCTest

/// In-flight work keeps its `ImageLoadTask` alive (the fetch's callbacks hold it), and lets it go when done:
/// the cycle task → fetch → callbacks → task is broken on every ending.
final class ImageLoadTaskLifetimeTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    /// Starts a request for `path` and returns its operation and a weak reference to its shared task.
    private func start(_ path: String, options: ImageOptions, completion: @escaping ImageCompletion)
        -> (ImageOperation, () -> ImageLoadTask?) {
        let manager = fixture.manager
        let operation = manager.requestImage(url: fixture.server.url(path), options: options, completion: completion)
        weak var task = manager.tasks.withLock { $0.values.first }
        XCTAssertNotNil(task, "registered while in flight")
        return (operation, { task })
    }

    /// Waits (polling the weak reference, with a deadline) until the task is freed; the network thread lets
    /// the fetch's callbacks go just after the completion runs.
    private func assertFreed(_ task: () -> ImageLoadTask?, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while task() != nil, Date() < deadline { usleep(1_000) }
        XCTAssertNil(task(), "the task is freed once its work ended", file: file, line: line)
    }

    func testTaskIsFreedAfterFinishingAndAfterCancelling() throws {
        // The response waits until the test has found the task in flight: on loopback the whole load could
        // otherwise end before the lookup (CI once: "registered while in flight" failed).
        let looked = DispatchSemaphore(value: 0)
        let png = try TestImages.png()
        fixture.server.route("/ok.png") { _ in
            _ = looked.wait(timeout: .now() + 10)
            return .bytes(png, contentType: "image/png")
        }
        fixture.server.route("/slow.png", .bytes(png, contentType: "image/png").delayed(by: 0.3))
        let finished = expectation(description: "finished")
        let (_, finishedTask) = start("/ok.png", options: [.ignoreDiskCache]) { _, _, _, stage, _ in
            if stage == .finished { finished.fulfill() }
        }
        looked.signal()
        wait(for: [finished], timeout: 10)
        assertFreed(finishedTask)

        let cancelled = expectation(description: "cancelled")
        let (operation, cancelledTask) = start("/slow.png", options: [.ignoreDiskCache]) { _, _, _, stage, _ in
            if stage == .cancelled { cancelled.fulfill() }
        }
        operation.cancel()
        wait(for: [cancelled], timeout: 10)
        assertFreed(cancelledTask)
    }
}
