import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// One focused test per option.
final class ImageOptionsTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    func testRefreshImageCacheDownloadsAgainAndReplacesTheEntry() throws {
        fixture.server.route("/r.png", .bytes(try TestImages.png(seed: 1)))
        let url = fixture.server.url("/r.png")
        _ = fixture.load(url)
        fixture.server.route("/r.png", .bytes(try TestImages.png(seed: 2)))
        XCTAssertEqual(fixture.load(url).source, .memoryCache)
        let refreshed = fixture.load(url, options: [.refreshImageCache])
        XCTAssertEqual(refreshed.source, .remote)
        XCTAssertEqual(fixture.server.requestCount(for: "/r.png"), 2)
        XCTAssertEqual(try fixture.manager.cache?.getImageData(forKey: url.absoluteString), try TestImages.png(seed: 2))
    }

    func testIgnoreDiskCacheNeitherReadsNorWritesDisk() throws {
        let url = fixture.serve("/d.png", try TestImages.png())
        XCTAssertEqual(fixture.load(url, options: [.ignoreDiskCache]).source, .remote)
        XCTAssertFalse(try fixture.manager.cache!.containsImage(forKey: url.absoluteString, type: .disk))
        // A disk entry exists but is ignored.
        try fixture.manager.cache!.diskCache!.setObject(try TestImages.png(seed: 9), forKey: url.absoluteString)
        XCTAssertEqual(fixture.load(url, options: [.ignoreDiskCache], manager: try fixture.freshManager()).source, .remote)
    }

    func testCacheMemoryOnlyKeepsNothingOnDisk() throws {
        let url = fixture.serve("/m.png", try TestImages.png())
        XCTAssertEqual(fixture.load(url, options: [.cacheMemoryOnly]).source, .remote)
        XCTAssertTrue(try fixture.manager.cache!.containsImage(forKey: url.absoluteString, type: .memory))
        XCTAssertFalse(try fixture.manager.cache!.containsImage(forKey: url.absoluteString, type: .disk))
    }

    func testIgnoreImageDecodingKeepsStraightAlpha() throws {
        let url = fixture.serve("/s.png", try TestImages.png())
        let outcome = fixture.load(url, options: [.ignoreImageDecoding])
        XCTAssertEqual(outcome.image?.isDecodedForDisplay, false)
        XCTAssertEqual(outcome.image?.pixelFormat, .rgba8)
    }

    func testIgnoreAnimatedImageDecodesTheFirstFrameOnly() throws {
        let url = fixture.serve("/anim.png", try TestImages.apng(frames: 3))
        XCTAssertEqual(fixture.load(url, options: [.ignoreAnimatedImage]).image?.frameCount, 1)
        XCTAssertEqual(fixture.load(url, options: [.refreshImageCache]).image?.frameCount, 3)
    }

    func testIgnoreFailedURLSkipsKnownBadURLs() throws {
        fixture.server.route("/gone.png", .status(404))
        let url = fixture.server.url("/gone.png")
        _ = fixture.load(url, options: [.ignoreFailedURL])
        let second = fixture.load(url, options: [.ignoreFailedURL])
        guard case .inFailedURLList? = second.error else { return XCTFail("got \(String(describing: second.error))") }
        XCTAssertEqual(fixture.server.requestCount(for: "/gone.png"), 1)
        // Without the option the URL is tried again.
        _ = fixture.load(url)
        XCTAssertEqual(fixture.server.requestCount(for: "/gone.png"), 2)
    }

    func testThumbnailIsDownsampledAndCachedUnderItsOwnKey() throws {
        let url = fixture.serve("/big.jpg", try TestImages.jpeg(width: 400, height: 300), contentType: "image/jpeg")
        let thumb = fixture.load(url, thumbnail: 100)
        XCTAssertEqual(thumb.image.map { max($0.width, $0.height) }, 100)
        XCTAssertEqual(thumb.image?.width, 100)
        XCTAssertEqual(thumb.image?.height, 75)
        let full = fixture.load(url)
        XCTAssertEqual(full.image?.width, 400)
        XCTAssertEqual(full.source, .diskCache, "the full-size image is another memory entry over the same bytes")
        XCTAssertEqual(fixture.load(url, thumbnail: 100).source, .memoryCache)
        XCTAssertEqual(fixture.server.requestCount(for: "/big.jpg"), 1)
    }

    func testPriorityOptionsOrderQueuedTransfers() throws {
        let queue = FetchQueue(maxConcurrentTransfers: 1)
        let manager = ImageManager(cache: nil, queue: queue)
        for name in ["low", "normal", "high"] { fixture.serve("/\(name).png", try TestImages.png()) }
        queue.suspend()
        let order = Mutex<[String]>([])
        let done = expectation(description: "all three")
        done.expectedFulfillmentCount = 3
        // The transfer order (progress runs on the network thread, in transfer order; completions may finish
        // decoding on different image queues in any order).
        for (name, options) in [("low", ImageOptions.lowPriority), ("normal", []), ("high", .highPriority)] {
            manager.requestImage(url: fixture.server.url("/\(name).png"), options: options, progress: { _, _ in
                order.withLock { if $0.last != name { $0.append(name) } }
            }) { _, _, _, stage, _ in
                if stage == .finished { done.fulfill() }
            }
        }
        queue.resume()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(order.withLock { $0 }, ["high", "normal", "low"])
    }

    func testProgressiveDeliversPartialImagesBeforeTheFinalOne() throws {
        let data = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/p.jpg", .drip(data, chunk: max(1, data.count / 8), interval: 0.25))
        let outcome = fixture.load(fixture.server.url("/p.jpg"), options: [.progressive])
        XCTAssertEqual(outcome.stage, .finished)
        XCTAssertGreaterThan(outcome.partials, 0, "partial images arrive while the body drips")
        // Without the option: none.
        fixture.server.route("/p2.jpg", .drip(data, chunk: max(1, data.count / 8), interval: 0.25))
        XCTAssertEqual(fixture.load(fixture.server.url("/p2.jpg")).partials, 0)
    }

    func testProgressiveBlurOnlyForProgressiveJPEG() throws {
        let baseline = try TestImages.jpeg(width: 640, height: 480, progressive: false)
        fixture.server.route("/b.jpg", .drip(baseline, chunk: max(1, baseline.count / 8), interval: 0.25))
        XCTAssertEqual(fixture.load(fixture.server.url("/b.jpg"), options: [.progressiveBlur]).partials, 0,
                       "a baseline JPEG gets no blurred partials")
        let progressive = try TestImages.jpeg(width: 640, height: 480, progressive: true)
        fixture.server.route("/pb.jpg", .drip(progressive, chunk: max(1, progressive.count / 6), interval: 0.45))
        XCTAssertGreaterThan(fixture.load(fixture.server.url("/pb.jpg"), options: [.progressiveBlur]).partials, 0)
    }
}
