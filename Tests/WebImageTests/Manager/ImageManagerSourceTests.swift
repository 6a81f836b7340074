import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

final class ImageManagerSourceTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    func testRemoteThenDiskThenMemory() throws {
        let url = fixture.serve("/a.png", try TestImages.png())
        let first = fixture.load(url)
        XCTAssertEqual(first.stage, .finished)
        XCTAssertEqual(first.source, .remote)
        XCTAssertEqual(first.image?.width, 64)
        XCTAssertEqual(first.image?.isDecodedForDisplay, true)

        // A new manager on the same folder: nothing in its memory, the bytes on disk.
        let second = fixture.load(url, manager: try fixture.freshManager())
        XCTAssertEqual(second.source, .diskCache)
        XCTAssertEqual(second.image?.firstFrame.buffer, first.image?.firstFrame.buffer)

        // The first manager again: memory, synchronously.
        let hit = Mutex<ImageSource?>(nil)
        fixture.manager.requestImage(url: url) { _, _, source, _, _ in hit.withLock { $0 = source } }
        XCTAssertEqual(hit.withLock { $0 }, .memoryCache, "a memory hit completes before requestImage returns")
        XCTAssertEqual(fixture.server.requestCount(for: "/a.png"), 1)
    }

    func testHTTPErrorsAreReportedWithTheirStatus() {
        fixture.server.route("/missing.png", .status(404))
        let outcome = fixture.load(fixture.server.url("/missing.png"))
        XCTAssertEqual(outcome.stage, .finished)
        XCTAssertNil(outcome.image)
        guard case .fetchFailed(let error)? = outcome.error else { return XCTFail("expected a fetch error, got \(String(describing: outcome.error))") }
        XCTAssertEqual(error.httpStatusCode, 404)
    }

    func testCorruptDataIsADecodeErrorAndNothingIsCached() throws {
        var bytes = try TestImages.png()
        bytes.replaceSubrange(40..<bytes.count, with: Data(repeating: 0x5A, count: bytes.count - 40))
        let url = fixture.serve("/corrupt.png", bytes)
        let outcome = fixture.load(url)
        guard case .decodeFailed? = outcome.error else { return XCTFail("expected decodeFailed, got \(String(describing: outcome.error))") }
        let cache = try XCTUnwrap(fixture.manager.cache)
        XCTAssertFalse(try cache.containsImage(forKey: url.absoluteString))
        XCTAssertFalse(fixture.manager.queue.failedURLs.contains(url), "not in the failed list without .ignoreFailedURL")
        // With .ignoreFailedURL the failed decode is remembered (for this variant: ImageManagerFailedVariantTests;
        // the URL's transfer did not fail, so the queue's URL list stays empty) and the next request makes no
        // transfer.
        _ = fixture.load(url, options: [.ignoreFailedURL])
        XCTAssertFalse(fixture.manager.queue.failedURLs.contains(url), "a decode failure listed the whole URL")
        let requestsBefore = fixture.server.requestCount(for: "/corrupt.png")
        let again = fixture.load(url, options: [.ignoreFailedURL])
        guard case .inFailedURLList? = again.error else { return XCTFail("expected inFailedURLList, got \(String(describing: again.error))") }
        XCTAssertEqual(fixture.server.requestCount(for: "/corrupt.png"), requestsBefore)
    }

    func testCorruptDiskEntryHealsFromTheNetwork() throws {
        let url = fixture.serve("/heal.png", try TestImages.png())
        let cache = try XCTUnwrap(fixture.manager.cache)
        try cache.diskCache!.setObject(Data("not an image".utf8), forKey: url.absoluteString)
        let outcome = fixture.load(url)
        XCTAssertEqual(outcome.source, .remote)
        XCTAssertNotNil(outcome.image)
        XCTAssertEqual(try cache.getImageData(forKey: url.absoluteString), try TestImages.png())
    }

    func testCacheKeyFilterSharesEntriesAcrossSignedURLs() throws {
        fixture.server.route("/signed.png", .bytes(try TestImages.png(), contentType: "image/png"))
        fixture.manager.cacheKeyFilter = { url in
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.query = nil
            return components.string!
        }
        let a = fixture.load(URL(string: fixture.server.url("/signed.png").absoluteString + "?sig=1")!)
        let b = fixture.load(URL(string: fixture.server.url("/signed.png").absoluteString + "?sig=2")!)
        XCTAssertEqual(a.source, .remote)
        XCTAssertEqual(b.source, .memoryCache)
        XCTAssertEqual(fixture.server.requestCount(for: "/signed.png"), 1)
    }

    func testHeadersAndHeadersFilterReachTheServer() throws {
        let url = fixture.serve("/h.png", try TestImages.png())
        fixture.manager.headersFilter = { _, headers in headers.merging(["X-Token": "abc"]) { $1 } }
        _ = fixture.load(url)
        let request = try XCTUnwrap(fixture.server.requests(for: "/h.png").first)
        // The registry's Accept (other tests' `ImageService`s register the codec modules for the whole process, and
        // the order tests run in varies between builds), ending in the built-in formats.
        XCTAssertEqual(request.header("Accept"), ImageManager.defaultHeaders["Accept"])
        XCTAssertTrue(request.header("Accept")?.hasSuffix("image/webp,image/apng,image/*;q=0.8") == true)
        XCTAssertEqual(request.header("X-Token"), "abc")
    }

    func testTransformsAreAppliedAndCachedUnderTheirOwnKey() throws {
        let url = fixture.serve("/t.png", try TestImages.png())
        let flip = ImageTransform(id: "flip") { image, _ in
            guard let flipped = try? image.firstFrame.buffer.flippedHorizontally() else { return nil }
            return Image(buffer: flipped, format: image.format)
        }
        let done = expectation(description: "transformed")
        let result = Mutex<Image?>(nil)
        fixture.manager.requestImage(url: url, transform: flip) { image, _, _, stage, _ in
            if stage == .finished { result.withLock { $0 = image }; done.fulfill() }
        }
        wait(for: [done], timeout: 10)
        let plain = fixture.load(url)
        let transformed = try XCTUnwrap(result.withLock { $0 })
        let original = try XCTUnwrap(plain.image)
        XCTAssertEqual(transformed.firstFrame.buffer.pixel(x: 0, y: 0), original.firstFrame.buffer.pixel(x: 63, y: 0))
        XCTAssertEqual(plain.source, .diskCache, "the untransformed image is a different memory entry")
    }

    func testAsyncImageAndEvents() async throws {
        let url = fixture.serve("/async.png", try TestImages.png())
        let image = try await fixture.manager.image(for: url)
        XCTAssertEqual(image.height, 48)
        var sawFinished = false
        for try await event in fixture.manager.imageEvents(for: url) {
            if case .finished(let image, let source) = event {
                sawFinished = true
                XCTAssertEqual(image.width, 64)
                XCTAssertEqual(source, .memoryCache)
            }
        }
        XCTAssertTrue(sawFinished)
        fixture.server.route("/slow.png", HTTPTestResponse.bytes(try TestImages.png()).delayed(by: 5))
        let manager = fixture.manager
        let slowURL = fixture.server.url("/slow.png")
        let task = Task { try await manager.image(for: slowURL) }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("a cancelled task must throw")
        } catch is CancellationError {
        }
    }
}
