import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

final class ImagePrefetcherTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    private func serveImages(_ count: Int, prefix: String = "p", delay: Double = 0) throws -> [URL] {
        try (0..<count).map { i in
            var response = HTTPTestResponse.bytes(try TestImages.png(seed: i), contentType: "image/png")
            response.delay = delay
            fixture.server.route("/\(prefix)\(i).png", response)
            return fixture.server.url("/\(prefix)\(i).png")
        }
    }

    func testMemoryDestinationMakesLaterRequestsMemoryHits() async throws {
        let urls = try serveImages(8)
        let prefetcher = ImagePrefetcher(manager: fixture.manager)
        let summary = await prefetcher.prefetch(urls + urls.prefix(3))  // duplicates load once
        XCTAssertEqual(summary.loaded, 8)
        XCTAssertEqual(summary.failed + summary.cancelled + summary.alreadyCached, 0)
        for url in urls {
            let source = Mutex<ImageSource?>(nil)
            fixture.manager.requestImage(url: url) { _, _, s, _, _ in source.withLock { $0 = s } }
            XCTAssertEqual(source.withLock { $0 }, .memoryCache, "\(url) was decoded into memory")
            XCTAssertEqual(fixture.server.requestCount(for: url.path), 1)
        }
        let again = await prefetcher.prefetch(urls)
        XCTAssertEqual(again.alreadyCached, 8)
        XCTAssertEqual(fixture.server.totalRequestCount, 8, "nothing fetched twice")
    }

    func testDiskDestinationStoresBytesWithoutDecoding() async throws {
        let urls = try serveImages(5)
        let prefetcher = ImagePrefetcher(manager: fixture.manager, destination: .diskCache)
        let summary = await prefetcher.prefetch(urls)
        XCTAssertEqual(summary.loaded, 5)
        XCTAssertEqual(fixture.manager.cache?.memoryCache.totalCount, 0, "nothing decoded into memory")
        for url in urls {
            XCTAssertTrue(try fixture.manager.cache?.containsImage(forKey: url.absoluteString, type: .disk) ?? false)
        }
        let second = await prefetcher.prefetch(urls)
        XCTAssertEqual(second.alreadyCached, 5)
        // Showing one later: a disk hit, no new request.
        let outcome = fixture.load(urls[2], manager: try fixture.freshManager())
        XCTAssertEqual(outcome.source, .diskCache)
        XCTAssertEqual(outcome.image?.width, 64)
        XCTAssertEqual(fixture.server.totalRequestCount, 5)
    }

    func testFailuresAreCountedAndNotCached() async throws {
        fixture.server.route("/missing.png", .status(404))
        fixture.server.route("/garbage.png", .bytes(Array("<html>not an image</html>".utf8), contentType: "text/html"))
        let bad = [fixture.server.url("/missing.png"), fixture.server.url("/garbage.png")]
        for destination in [ImagePrefetcher.Destination.memoryCache, .diskCache] {
            let summary = await ImagePrefetcher(manager: fixture.manager, destination: destination).prefetch(bad)
            XCTAssertEqual(summary.failed, 2, "\(destination)")
            XCTAssertEqual(summary.loaded, 0, "\(destination)")
        }
        XCTAssertFalse(try fixture.manager.cache?.containsImage(forKey: bad[1].absoluteString, type: .disk) ?? true)
    }

    /// The next `onFinish` summary of a prefetcher, and an expectation fulfilled with it.
    /// `@unchecked Sendable`: immutable references only; the summary is behind a Mutex and XCTestExpectation
    /// may be fulfilled from any thread.
    private final class FinishRecord: @unchecked Sendable {
        let done: XCTestExpectation
        private let box = Mutex<ImagePrefetcher.Summary?>(nil)
        var summary: ImagePrefetcher.Summary? { box.withLock { $0 } }

        init(_ prefetcher: ImagePrefetcher, _ test: XCTestCase) {
            done = test.expectation(description: "drained")
            prefetcher.onFinish = { [self] summary in box.withLock { $0 = summary }; done.fulfill() }
        }
    }

    func testAtMostMaxConcurrentRequestsLoadAtOnce() throws {
        let urls = try serveImages(8, delay: 0.15)
        let prefetcher = ImagePrefetcher(manager: fixture.manager, maxConcurrentRequests: 2)
        let finish = FinishRecord(prefetcher, self)
        prefetcher.startPrefetching(with: urls)
        var maxActive = 0
        while finish.summary == nil {
            maxActive = max(maxActive, fixture.manager.networkActivityCount)
            XCTAssertLessThanOrEqual(prefetcher.pendingCount, 8)
            usleep(2_000)
        }
        wait(for: [finish.done], timeout: 20)
        XCTAssertEqual(finish.summary?.loaded, 8)
        XCTAssertLessThanOrEqual(maxActive, 2)
        XCTAssertGreaterThan(maxActive, 0)
        XCTAssertEqual(prefetcher.pendingCount, 0)
    }

    func testStopCancelsRunningAndDropsWaitingURLs() throws {
        let urls = try serveImages(6, delay: 3)
        let prefetcher = ImagePrefetcher(manager: fixture.manager, maxConcurrentRequests: 2)
        let finish = FinishRecord(prefetcher, self)
        prefetcher.startPrefetching(with: urls)
        XCTAssertEqual(prefetcher.pendingCount, 6)
        prefetcher.stopPrefetching()
        wait(for: [finish.done], timeout: 10)
        XCTAssertEqual(finish.summary, {
            var expected = ImagePrefetcher.Summary()
            expected.cancelled = 6
            return expected
        }())
        XCTAssertEqual(prefetcher.pendingCount, 0)
        for url in urls.suffix(4) { XCTAssertEqual(fixture.server.requestCount(for: url.path), 0, "never started") }
    }

    func testCancellingTheAsyncPrefetchStopsIt() async throws {
        let urls = try serveImages(4, delay: 3)
        let prefetcher = ImagePrefetcher(manager: fixture.manager, maxConcurrentRequests: 1)
        let task = Task { await prefetcher.prefetch(urls) }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        let summary = await task.value
        XCTAssertEqual(summary.cancelled, 4)
        XCTAssertEqual(prefetcher.pendingCount, 0)
    }
}
