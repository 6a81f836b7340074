import Dispatch
import Foundation
import ImageCodec
import KVCache
import TestSupport
@testable import WebImage
import XCTest

/// `.ignoreFailedURL` lists a decode failure for its variant only, and a transfer failure for the URL (item 19);
/// keys and metadata over the disk cache's caps are not cached by the manager (item 11).
final class ImageManagerFailedVariantTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

    private func load(_ url: URL, options: ImageOptions = [.ignoreFailedURL], thumbnail: Int? = nil)
        -> (image: Image?, source: ImageSource, error: WebImageError?) {
        let outcome = fixture.load(url, options: options, thumbnail: thumbnail, timeout: 60)
        return (outcome.image, outcome.source, outcome.error)
    }

    /// A 10,000 × 10,000 JPEG (100 Mpx, over the default 75 Mpx per frame) fails at full size; its thumbnail
    /// decodes downsampled within the limits and must not be refused because the full-size decode failed.
    func testFullSizeDecodeFailureDoesNotRefuseTheThumbnails() throws {
        let url = fixture.serve("/huge.jpg", DecodeBombs.grayJPEG(width: 10_000, height: 10_000), contentType: "image/jpeg")
        let full = load(url)
        guard case .decodeFailed? = full.error else { return XCTFail("expected a decode failure, got \(String(describing: full.error))") }
        XCTAssertEqual(fixture.server.requestCount(for: "/huge.jpg"), 1)

        let thumbnail = load(url, thumbnail: 64)
        XCTAssertNil(thumbnail.error, "the thumbnail was refused: \(String(describing: thumbnail.error))")
        XCTAssertEqual(thumbnail.image.map { max($0.width, $0.height) }, 64)

        // The variant that failed stays listed: no new transfer, no new decode.
        let again = load(url)
        guard case .inFailedURLList? = again.error else { return XCTFail("expected inFailedURLList, got \(String(describing: again.error))") }
        XCTAssertEqual(fixture.server.requestCount(for: "/huge.jpg"), 2, "the listed variant made a request")
        fixture.manager.removeAllFailedDecodes()
        guard case .decodeFailed? = load(url).error else { return XCTFail("a forgotten failure was still refused") }
        XCTAssertEqual(fixture.server.requestCount(for: "/huge.jpg"), 3)
    }

    /// A transfer failure (404) still lists the URL for every variant.
    func testTransferFailureStillListsTheURLForEveryVariant() throws {
        fixture.server.route("/missing.png", .status(404))
        let url = fixture.server.url("/missing.png")
        guard case .fetchFailed? = load(url).error else { return XCTFail("expected a fetch failure") }
        guard case .inFailedURLList? = load(url, thumbnail: 32).error else { return XCTFail("a 404 URL was fetched again") }
        XCTAssertEqual(fixture.server.requestCount(for: "/missing.png"), 1)
    }

    /// A URL longer than the disk cache's key limit is delivered but not cached, in memory or on disk.
    func testKeyOverTheLimitIsDeliveredNotCached() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        cache.diskCache!.keyLengthLimit = 200
        let path = "/" + String(repeating: "p", count: 300) + ".png"
        let url = fixture.serve(path, try TestImages.png())
        XCTAssertNotNil(load(url, options: []).image)
        cache.waitForPendingWrites()
        XCTAssertEqual(cache.memoryCache.totalCount, 0)
        XCTAssertEqual(try cache.diskCache!.totalCount(), 0)
        XCTAssertEqual(load(url, options: []).source, .remote)
    }

    /// A validator far over any limit: the bytes are cached without it (the ETag grammar keeps at most
    /// `EntityTag.maximumLength` bytes, so HTTP metadata stays far under the extended-data limit).
    func testMetadataOverTheLimitIsCachedWithoutItsHTTPFacts() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        let png = try TestImages.png()
        let etag = "\"" + String(repeating: "e", count: 40_000) + "\""
        var response = HTTPTestResponse.bytes(png, contentType: "image/png")
        response.etag = etag
        fixture.server.route("/etag.png", response)
        let url = fixture.server.url("/etag.png")
        XCTAssertNotNil(load(url, options: []).image)
        cache.waitForPendingWrites()
        let key = fixture.manager.cacheKey(for: url)
        XCTAssertEqual(try cache.getImageData(forKey: key), png, "the bytes were not cached")
        let metadata = try XCTUnwrap(cache.getMetadata(forKey: key))
        XCTAssertNil(metadata.http?.etag, "a 40 KB ETag was stored")
        XCTAssertLessThanOrEqual(try XCTUnwrap(cache.diskCache!.extendedData(forKey: key)).count, DiskCache.defaultExtendedDataSizeLimit)
    }
}
