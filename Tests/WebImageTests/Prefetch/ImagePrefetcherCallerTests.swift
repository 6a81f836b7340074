import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Several callers of one prefetcher: cancelling one `prefetch(_:)` call withdraws only that caller, and a call
/// made in an already-cancelled task loads nothing.
final class ImagePrefetcherCallerTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    /// Waits (polling, with a deadline) until the server has seen `path`.
    private func waitForRequest(_ path: String) {
        let deadline = Date().addingTimeInterval(10)
        while fixture.server.requestCount(for: path) == 0, Date() < deadline { usleep(1_000) }
        XCTAssertEqual(fixture.server.requestCount(for: path), 1, "\(path) is loading")
    }

    /// Caller A and caller B prefetch the same slow URL (and `startPrefetching` wants another one); cancelling
    /// A returns A at once with its URLs cancelled, while B's load goes on and B sees it loaded.
    ///
    /// Both callers are registered before A is cancelled, by what the server saw: B's URL was requested before A
    /// was started, and A's own third URL (wanted by nobody else) was requested before A is cancelled. (Starting
    /// both tasks at once let A's cancel land before B registered: the shared URL, then wanted by nobody, was
    /// rightly stopped and loaded again for B, and the request count said 2.)
    func testCancellingOneCallerDoesNotCancelTheOthers() async throws {
        fixture.server.route("/shared.png", .bytes(try TestImages.png(seed: 1), contentType: "image/png").delayed(by: 0.5))
        fixture.server.route("/bulk.png", .bytes(try TestImages.png(seed: 2), contentType: "image/png").delayed(by: 0.5))
        fixture.server.route("/a-only.png", .bytes(try TestImages.png(seed: 4), contentType: "image/png").delayed(by: 5))
        let shared = fixture.server.url("/shared.png")
        let bulk = fixture.server.url("/bulk.png")
        let aOnly = fixture.server.url("/a-only.png")
        let prefetcher = ImagePrefetcher(manager: fixture.manager, maxConcurrentRequests: 3)
        let finished = Mutex<[ImagePrefetcher.Summary]>([])
        prefetcher.onFinish = { summary in finished.withLock { $0.append(summary) } }
        prefetcher.startPrefetching(with: [bulk])
        let b = Task { await prefetcher.prefetch([shared]) }
        waitForRequest("/shared.png")
        let a = Task { await prefetcher.prefetch([shared, bulk, aOnly]) }
        waitForRequest("/a-only.png")
        a.cancel()
        let summaryA = await a.value
        XCTAssertEqual(summaryA.cancelled, 3, "A's own URLs count cancelled for A")
        XCTAssertEqual(summaryA.loaded, 0)
        let summaryB = await b.value
        XCTAssertEqual(summaryB.loaded, 1, "B's load was not cancelled by A")
        XCTAssertEqual(summaryB.cancelled, 0)
        // `startPrefetching` still wanted bulk.png: it loaded too; a-only.png, wanted by A alone, stopped. The
        // queue drains once (a-only.png stopped while the others loaded), and `onFinish` reports it after the
        // last URL left the queue: wait for the report, not for `pendingCount`.
        let deadline = Date().addingTimeInterval(10)
        while finished.withLock({ $0.isEmpty }), Date() < deadline { usleep(1_000) }
        XCTAssertEqual(fixture.load(bulk).source, .memoryCache)
        XCTAssertEqual(fixture.load(shared).source, .memoryCache)
        XCTAssertEqual(fixture.server.requestCount(for: "/shared.png"), 1)
        XCTAssertEqual(fixture.server.requestCount(for: "/bulk.png"), 1)
        XCTAssertEqual(fixture.server.requestCount(for: "/a-only.png"), 1, "A's own URL was not loaded again")
        var expected = ImagePrefetcher.Summary()
        expected.loaded = 2
        expected.cancelled = 1
        XCTAssertEqual(finished.withLock { $0 }, [expected],
                       "one drain: shared.png and bulk.png loaded, only a-only.png (wanted by nobody else) stopped")
    }

    /// The last caller that wants a URL withdrawing stops it.
    func testLastCallerLeavingStopsTheURL() async throws {
        fixture.server.route("/alone.png", .bytes(try TestImages.png(seed: 3), contentType: "image/png").delayed(by: 2))
        let url = fixture.server.url("/alone.png")
        let prefetcher = ImagePrefetcher(manager: fixture.manager)
        let task = Task { await prefetcher.prefetch([url]) }
        waitForRequest("/alone.png")
        task.cancel()
        let summary = await task.value
        XCTAssertEqual(summary.cancelled, 1)
        let deadline = Date().addingTimeInterval(10)
        while prefetcher.pendingCount > 0, Date() < deadline { usleep(1_000) }
        XCTAssertEqual(prefetcher.pendingCount, 0, "stopped, not loading for nobody")
    }

    /// `prefetch(_:)` in an already-cancelled task loads nothing and reports everything cancelled.
    func testAlreadyCancelledTaskLoadsNothing() async throws {
        let urls = try (0..<6).map { index -> URL in
            fixture.server.route("/c\(index).png", .bytes(try TestImages.png(seed: index), contentType: "image/png"))
            return fixture.server.url("/c\(index).png")
        }
        let prefetcher = ImagePrefetcher(manager: fixture.manager)
        let summary = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await prefetcher.prefetch(urls)
        }.value
        XCTAssertEqual(summary.cancelled, 6)
        XCTAssertEqual(summary.loaded + summary.alreadyCached + summary.failed, 0)
        XCTAssertEqual(prefetcher.pendingCount, 0)
        XCTAssertEqual(fixture.server.totalRequestCount, 0, "nothing loaded")
    }
}
