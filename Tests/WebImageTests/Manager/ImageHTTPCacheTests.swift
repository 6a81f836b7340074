import Foundation
import TestSupport
import WebImage
import XCTest

/// `.useHTTPCache`: freshness, revalidation, 304 and changed ETags.
final class ImageHTTPCacheTests: XCTestCase {
    var fixture: PipelineFixture!
    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    func testFreshEntryIsServedWithoutARequest() throws {
        fixture.server.route("/fresh.png", HTTPTestResponse.bytes(try TestImages.png()).withHeader("Cache-Control", "max-age=3600"))
        let url = fixture.server.url("/fresh.png")
        XCTAssertEqual(fixture.load(url, options: [.useHTTPCache]).source, .remote)
        let again = fixture.load(url, options: [.useHTTPCache])
        XCTAssertEqual(again.source, .memoryCache, "fresh: served from memory, no disk read, no decode")
        let otherManager = try fixture.freshManager()
        XCTAssertEqual(fixture.load(url, options: [.useHTTPCache], manager: otherManager).source, .diskCache,
                       "fresh on disk for a manager with nothing in memory")
        XCTAssertEqual(fixture.server.requestCount(for: "/fresh.png"), 1)
    }

    /// A stale entry is never a memory hit under `.useHTTPCache`: it is revalidated, even though its image is
    /// in memory.
    func testAStaleEntryIsNotAMemoryHit() throws {
        fixture.server.route("/stale-memory.png", HTTPTestResponse.bytes(try TestImages.png())
            .withHeader("Cache-Control", "max-age=0").withETag("\"m1\""))
        let url = fixture.server.url("/stale-memory.png")
        XCTAssertEqual(fixture.load(url, options: [.useHTTPCache]).source, .remote)
        XCTAssertNotEqual(fixture.load(url, options: [.useHTTPCache]).source, .memoryCache)
        XCTAssertEqual(fixture.server.requests(for: "/stale-memory.png").last?.header("If-None-Match"), "\"m1\"")
        XCTAssertEqual(fixture.load(url).source, .memoryCache, "without .useHTTPCache the memory hit stays")
    }

    func testStaleEntryIsRevalidatedAnd304ServesTheCachedBytes() throws {
        let png = try TestImages.png()
        fixture.server.route("/stale.png", HTTPTestResponse.bytes(png).withHeader("Cache-Control", "max-age=0").withETag("\"v1\""))
        let url = fixture.server.url("/stale.png")
        XCTAssertEqual(fixture.load(url, options: [.useHTTPCache]).source, .remote)
        let before = try XCTUnwrap(try fixture.manager.cache?.getMetadata(forKey: url.absoluteString)?.http)
        let revalidated = fixture.load(url, options: [.useHTTPCache])
        XCTAssertEqual(revalidated.source, .diskCache)
        XCTAssertEqual(revalidated.image?.width, 64)
        let requests = fixture.server.requests(for: "/stale.png")
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(requests.last?.header("If-None-Match"), "\"v1\"")
        let after = try XCTUnwrap(try fixture.manager.cache?.getMetadata(forKey: url.absoluteString)?.http)
        XCTAssertGreaterThan(after.fetchDate, before.fetchDate, "a 304 refreshes the entry's fetch date")
        XCTAssertEqual(after.etag, "\"v1\"")
    }

    func testChangedETagReplacesTheBytes() throws {
        let url = fixture.server.url("/changing.png")
        fixture.server.route("/changing.png", HTTPTestResponse.bytes(try TestImages.png(seed: 1)).withHeader("Cache-Control", "no-cache").withETag("\"a\""))
        _ = fixture.load(url, options: [.useHTTPCache])
        fixture.server.route("/changing.png", HTTPTestResponse.bytes(try TestImages.png(seed: 2)).withHeader("Cache-Control", "no-cache").withETag("\"b\""))
        let changed = fixture.load(url, options: [.useHTTPCache])
        XCTAssertEqual(changed.source, .remote)
        XCTAssertEqual(try fixture.manager.cache?.getImageData(forKey: url.absoluteString), try TestImages.png(seed: 2))
        XCTAssertEqual(try fixture.manager.cache?.getMetadata(forKey: url.absoluteString)?.http?.etag, "\"b\"")
    }

    func testLastModifiedRevalidation() throws {
        let lastModified = "Tue, 14 Nov 2023 00:00:00 GMT"
        fixture.server.route("/lm.png", HTTPTestResponse.bytes(try TestImages.png()).withLastModified(lastModified))
        let url = fixture.server.url("/lm.png")
        _ = fixture.load(url, options: [.useHTTPCache])
        XCTAssertEqual(fixture.load(url, options: [.useHTTPCache]).source, .diskCache)
        XCTAssertEqual(fixture.server.requests(for: "/lm.png").last?.header("If-Modified-Since"), lastModified)
    }

    func testNoStoreIsNotWrittenToDisk() throws {
        fixture.server.route("/ns.png", HTTPTestResponse.bytes(try TestImages.png()).withHeader("Cache-Control", "no-store"))
        let url = fixture.server.url("/ns.png")
        XCTAssertNotNil(fixture.load(url, options: [.useHTTPCache]).image)
        XCTAssertFalse(try fixture.manager.cache!.containsImage(forKey: url.absoluteString, type: .disk))
    }
}
