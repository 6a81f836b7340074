import Foundation
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// `ImageManager.imageInfo(url:)` over real HTTP (the loopback origin): the header without a decode.
final class ImageManagerInfoTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

    func testInfoReadsTheHeaderAndCachesOnlyTheBytes() async throws {
        let url = fixture.serve("/a.png", try TestImages.png(width: 70, height: 30))
        let info = try await fixture.manager.imageInfo(url: url)
        XCTAssertEqual(info.format, .png)
        XCTAssertEqual([info.width, info.height], [70, 30])
        XCTAssertEqual(info.frameCount, 1)
        XCTAssertFalse(info.hasAlpha)
        let cache = try XCTUnwrap(fixture.manager.cache)
        let key = fixture.manager.cacheKey(for: url)
        // No decoded image anywhere: only the bytes, on disk.
        XCTAssertFalse(try cache.containsImage(forKey: key, type: .memory))
        XCTAssertNotNil(try cache.getImageData(forKey: key))
        // A second call is a disk read, not a transfer.
        _ = try await fixture.manager.imageInfo(url: url)
        XCTAssertEqual(fixture.server.requestCount(for: "/a.png"), 1)
        // And the image request after it needs no transfer either.
        let loaded = fixture.load(url)
        XCTAssertEqual(loaded.source, .diskCache)
        XCTAssertEqual(fixture.server.requestCount(for: "/a.png"), 1)
    }

    func testAnimationAndOrientationComeFromTheHeader() async throws {
        let url = fixture.serve("/anim.png", try TestImages.apng(frames: 3), contentType: "image/apng")
        let info = try await fixture.manager.imageInfo(url: url)
        XCTAssertEqual(info.format, .apng)
        XCTAssertEqual(info.frameCount, 3)
        XCTAssertEqual(info.durations.reduce(0, +), 0.3, accuracy: 0.001)
    }

    func testNotAnImageIsADecodeErrorAndIsNotKept() async throws {
        let url = fixture.serve("/page.html", Data("<html>maintenance</html>".utf8), contentType: "text/html")
        do {
            _ = try await fixture.manager.imageInfo(url: url)
            XCTFail("expected decodeFailed")
        } catch WebImageError.decodeFailed {
        }
        let cache = try XCTUnwrap(fixture.manager.cache)
        XCTAssertNil(try cache.getImageData(forKey: fixture.manager.cacheKey(for: url)))
    }

    func testHTTPErrorsKeepTheirStatus() async throws {
        fixture.server.route("/missing.png", .status(404))
        do {
            _ = try await fixture.manager.imageInfo(url: fixture.server.url("/missing.png"))
            XCTFail("expected fetchFailed")
        } catch WebImageError.fetchFailed(let error) {
            XCTAssertEqual(error.httpStatusCode, 404)
        }
    }
}
