import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// `.useHTTPCache` against origins we did not write: nginx (its own `Date`, `ETag`, `Last-Modified`, `Expires`
/// and 304s), and a raw origin sending exactly the header lines of each case (repeated lines, `Age`,
/// `Cache-Control: =`, redirects), through the whole pipeline.
final class HTTPCacheRealOriginTests: XCTestCase {
    private var directory: URL!
    private var manager: ImageManager!
    private var raw: RawHTTPServer?
    private var nginx: NginxOrigin?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-cache-\(UUID().uuidString)")
        manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 4))
    }

    override func tearDown() {
        raw?.shutdown()
        nginx?.shutdown()
        manager = nil
        try? FileManager.default.removeItem(at: directory)
    }



    private func startRaw(_ handler: @escaping @Sendable (String) -> [UInt8]) throws -> RawHTTPServer {
        let server = try RawHTTPServer { path, _ in handler(path) }
        raw = server
        return server
    }

    /// One origin header used to kill the process, with or without `.useHTTPCache`.
    func testAMalformedCacheControlLoadsTheImage() throws {
        let png = try TestImages.png()
        let server = try startRaw { _ in RawImageResponse.with(["Cache-Control: =", "Cache-Control: max-age=1,=", "Expires: =",
                                                        "Age: =", "Date: =", "ETag: =", "Last-Modified: ="], body: png) }
        for (index, options) in [ImageOptions.useHTTPCache, []].enumerated() {
            let outcome = manager.loadAndWait(server.url("/a\(index).png"), options: options)
            XCTAssertEqual(outcome.image?.width, 64, "\(options): \(String(describing: outcome.error))")
        }
    }

    /// RFC 9111 §4.2.3: `max-age=60` with `Age: 60` is already stale: the second request goes to the origin.
    func testAnAgedResponseIsNotServedFromDiskForAnotherLifetime() throws {
        let png = try TestImages.png()
        let server = try startRaw { _ in RawImageResponse.with(["Cache-Control: max-age=60", "Age: 60"], body: png) }
        _ = manager.loadAndWait(server.url("/aged.png"))
        XCTAssertEqual(manager.loadAndWait(server.url("/aged.png")).source, .remote)
        XCTAssertEqual(server.requestHeads(for: "/aged.png").count, 2)
    }

    /// RFC 9110 §5.3: `no-store` on one line, `max-age=600` on the next: nothing on disk.
    func testNoStoreOnAnotherLineIsObeyed() throws {
        let png = try TestImages.png()
        let server = try startRaw { _ in RawImageResponse.with(["Cache-Control: no-store", "Cache-Control: max-age=600"], body: png) }
        let url = server.url("/ns.png")
        XCTAssertNotNil(manager.loadAndWait(url).image)
        XCTAssertFalse(try manager.cache!.containsImage(forKey: url.absoluteString, type: .disk))
    }

    /// A 302 in front of an immutable file: when the endpoint points elsewhere (a new avatar), the next
    /// request shows the new image, not the old one for a year.
    func testARedirectIsCachedByItsOwnFreshness() throws {
        let first = try TestImages.png(width: 64, height: 48), second = try TestImages.png(width: 32, height: 16)
        let target = Mutex("/v1.png")
        let server = try startRaw { path in
            switch path {
            case "/avatar": return Array("HTTP/1.1 302 Found\r\nLocation: \(target.withLock { $0 })\r\nContent-Length: 0\r\n\r\n".utf8)
            case "/v1.png": return RawImageResponse.with(["Cache-Control: public, max-age=31536000, immutable"], body: first)
            default: return RawImageResponse.with(["Cache-Control: public, max-age=31536000, immutable"], body: second)
            }
        }
        XCTAssertEqual(manager.loadAndWait(server.url("/avatar")).image?.width, 64)
        target.withLock { $0 = "/v2.png" }
        let updated = manager.loadAndWait(server.url("/avatar"))
        XCTAssertEqual(updated.image?.width, 32, "the redirect has no freshness: asked again, it leads to the new file")
        XCTAssertEqual(server.requestHeads(for: "/avatar").count, 2)
    }

    /// nginx's `expires 1h`: served from disk with no request; `Cache-Control: no-cache` with nginx's ETag:
    /// revalidated, and nginx's 304 serves the cached bytes.
    func testNginxFreshnessAndRevalidation() throws {
        let png = try TestImages.png()
        let origin: NginxOrigin
        do {
            origin = try NginxOrigin.start(files: ["fresh.png": png, "revalidated.png": png], locations: """
                location = /fresh.png { expires 1h; }
                location = /revalidated.png { add_header Cache-Control no-cache; }
                """)
        } catch {
            throw XCTSkip("nginx is needed for this test (make test-deps): \(error)")
        }
        nginx = origin
        XCTAssertEqual(manager.loadAndWait(origin.url("/fresh.png")).source, .remote)
        XCTAssertEqual(manager.loadAndWait(origin.url("/fresh.png")).source, .memoryCache, "fresh: no request, not even a disk read")
        let policy = try XCTUnwrap(try manager.cache?.getMetadata(forKey: origin.url("/fresh.png").absoluteString)?.http)
        XCTAssertEqual(policy.maxAge, 3_600)
        XCTAssertNotNil(policy.date, "nginx's Date is kept")
        XCTAssertNotNil(policy.etag, "nginx's ETag is a valid entity tag")
        XCTAssertNotNil(policy.lastModified, "nginx's Last-Modified is a valid HTTP date")

        XCTAssertEqual(manager.loadAndWait(origin.url("/revalidated.png")).source, .remote)
        let again = manager.loadAndWait(origin.url("/revalidated.png"))
        XCTAssertEqual(again.source, .diskCache)
        XCTAssertEqual(again.image?.width, 64)
        let log = try origin.accessLog()
        XCTAssertEqual(log.filter { $0.path == "/fresh.png" }.map(\.status), [200])
        XCTAssertEqual(log.filter { $0.path == "/revalidated.png" }.map(\.status), [200, 304])
    }
}
