import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Review 26: the HTTP caching of image sources (`CacheControl`, `HTTPCachePolicy`, the `.useHTTPCache` flow of
/// `ImageManager`) against RFC 9111. Each test is a defect found by reading the code: it fails on the code as it
/// is and passes once the fix named above it is made. End-to-end cases run against a real loopback origin
/// (`RawHTTPServer`) that answers each request with exactly the bytes the case needs; a pure type is used
/// where the rule lives in one.
final class Review26HTTPCachingTests: XCTestCase {
    private var directory: URL!
    private var manager: ImageManager!
    private var raw: RawHTTPServer?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("review26-http-\(UUID().uuidString)")
        manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 4))
    }

    override func tearDown() {
        raw?.shutdown()
        raw = nil
        manager = nil
        try? FileManager.default.removeItem(at: directory)
    }




    private func isOnDisk(_ url: URL) throws -> Bool {
        try manager.cache?.containsImage(forKey: url.absoluteString, type: .disk) ?? false
    }

    // MARK: - Vary (RFC 9111 §4.1)

    /// Wrong: `Vary` is never read. `HTTPCachePolicy.init(fields:)` (HTTPCachePolicy.swift:75-91) keeps no trace
    /// of it, so `isFresh` (HTTPCachePolicy.swift:116-121) calls a `Vary: *` response with `max-age=600` fresh,
    /// and `ImageManager.memoryImage(forKey:options:)` (ImageManager+Request.swift:58) / `loadFromDisk`
    /// (ImageLoadTask.swift:184) serve it without asking the origin.
    /// RFC 9111 §4.1: "A stored response with a Vary header field value containing a member "*" always fails to
    /// match" — it can never be reused without a request to the origin.
    /// Fix: record `Vary` in `HTTPCachePolicy` (a `varyStar` flag, or the nominated field names with the request's
    /// values); a policy with `Vary: *` is never fresh (nor recorded as fresh in `FreshnessTable`).
    func testAResponseWithVaryStarIsNotReusedWithoutAskingTheOrigin() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, _ in
            RawImageResponse.with(["Cache-Control: max-age=600", "Vary: *"], body: png)
        }
        raw = server
        let path = "/vary-star.png"
        XCTAssertEqual(manager.loadAndWait(server.url(path)).source, .remote)
        let second = manager.loadAndWait(server.url(path))
        XCTAssertNil(second.error)
        XCTAssertEqual(second.image?.width, 64)
        XCTAssertEqual(server.requestHeads(for: path).count, 2,
                       "a Vary: * response always fails to match: the second request must reach the origin")
    }

    /// Wrong: the same missing `Vary` support, for the case this SDK actually produces: the request headers change
    /// between two requests of one URL (`ImageManager.headers` set, or `defaultHeaders` growing when a codec
    /// registers `image/avif`), and the stored response said `Vary: Accept`. The entry is keyed by URL only
    /// (ImageManager+Request.swift:28, :58) and reused for a request whose `Accept` differs.
    /// RFC 9111 §4.1: a stored response with `Vary` may be reused only when every nominated field of the new
    /// request matches the one of the request that produced it.
    /// Fix: store the nominated request field values with the policy (the request's `Accept` is known in
    /// `ImageLoadTask.fetch` / `didFetch`) and treat a mismatch as not fresh (revalidate or fetch).
    func testAResponseVaryingOnAcceptIsNotReusedForAnotherAccept() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, _ in
            RawImageResponse.with(["Cache-Control: max-age=600", "Vary: Accept"], body: png)
        }
        raw = server
        let path = "/vary-accept.png"
        manager.headers = ["Accept": "image/png"]
        XCTAssertEqual(manager.loadAndWait(server.url(path)).source, .remote)
        manager.headers = ["Accept": "image/webp"]
        let second = manager.loadAndWait(server.url(path))
        XCTAssertNil(second.error)
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 2, "the stored response varies on Accept, and Accept changed: ask the origin")
        XCTAssertTrue(heads.last?.lowercased().contains("accept: image/webp") ?? false, "the new Accept is sent")
    }

    // MARK: - no-store (RFC 9111 §3, §5.2.2.5)

    /// Wrong: `imageData(for:options:)` ignores `.useHTTPCache`. It stores the fetched bytes whatever their
    /// `Cache-Control` (ImageManager+Data.swift:49-58: no `http.noStore` check, unlike `didFetch`
    /// (ImageLoadTask+Network.swift:52) and `prefetchToDisk` (ImageManager+DiskPrefetch.swift:47)), and serves
    /// any disk entry without a freshness check (ImageManager+Data.swift:26). A `no-store` image is kept on disk
    /// and served from it afterwards.
    /// RFC 9111 §3 / §5.2.2.5: a cache MUST NOT store a response with `no-store`.
    /// Fix: with `.useHTTPCache`, do not store when `http.noStore`, and revalidate a disk entry that is not
    /// `isFresh()` (as `loadFromDisk` does), or document that the option does not apply to `imageData`.
    func testImageDataWithUseHTTPCacheDoesNotStoreANoStoreResponse() async throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, _ in
            RawImageResponse.with(["Cache-Control: no-store"], body: png)
        }
        raw = server
        let path = "/no-store-data.png"
        let url = server.url(path)
        let first = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(first.source, .remote)
        XCTAssertEqual(first.data, png)
        XCTAssertFalse(try isOnDisk(url), "a no-store response must not be written to the disk cache")
        let second = try await manager.imageData(for: url, options: [.useHTTPCache])
        XCTAssertEqual(second.source, .remote, "nothing may be served from a store that must not exist")
        XCTAssertEqual(server.requestHeads(for: path).count, 2)
    }

    /// Wrong: a 304 that carries `Cache-Control: no-store` is merged into the stored entry
    /// (`HTTPCachePolicy.refreshed`, HTTPCachePolicy.swift:164-168 sets `noStore`), and the 304 path
    /// (ImageLoadTask+Network.swift:66-77) writes that metadata back beside the bytes: the entry stays on disk,
    /// flagged no-store, and keeps being served after every 304.
    /// RFC 9111 §4.3.4 makes the 304's fields replace the stored ones, and §3 forbids storing a response with
    /// `no-store`; browsers (Chromium's HttpCache::Transaction) doom the entry when the updated headers say
    /// no-store.
    /// Fix: in the 304 branch of `didFetch`, when `refreshed.http?.noStore == true`, serve the bytes this once but
    /// remove the disk entry (and skip the shared tier) instead of `setExtendedData`.
    func testA304CarryingNoStoreRemovesTheStoredResponse() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, head in
            if head.lowercased().contains("if-none-match:") {
                return RawImageResponse.notModified(["ETag: \"v1\"", "Cache-Control: no-store"])
            }
            return RawImageResponse.with(["ETag: \"v1\"", "Cache-Control: no-cache"], body: png)
        }
        raw = server
        let path = "/no-store-304.png"
        let url = server.url(path)
        XCTAssertEqual(manager.loadAndWait(url).source, .remote)
        XCTAssertTrue(try isOnDisk(url), "precondition: a no-cache response is stored")
        let second = manager.loadAndWait(url)
        XCTAssertNil(second.error)
        XCTAssertEqual(second.image?.width, 64, "the validated bytes may still answer this request")
        let heads = server.requestHeads(for: path)
        XCTAssertEqual(heads.count, 2)
        if heads.count >= 2 {
            XCTAssertTrue(heads[1].lowercased().contains("if-none-match:"), "precondition: the second request revalidated")
        }
        XCTAssertFalse(try isOnDisk(url), "after a 304 saying no-store, the response must not stay stored")
    }

    // MARK: - Status codes (RFC 9111 §3, §3.3)

    /// Wrong: the status code is never consulted. `didFetch` (ImageLoadTask+Network.swift:48-52) builds the policy
    /// from the headers alone and stores every successful transfer, so a `206 Partial Content` (a fragment of the
    /// file, here announced as half of it by `Content-Range`) is stored on disk and served for its `max-age` as if
    /// it were the whole image. The fetcher never sends `Range`, so it cannot combine or complete partial content.
    /// RFC 9111 §3 (a 206 is storable only by a cache that understands it) and §3.3: a cache that does not
    /// support Range and Content-Range MUST NOT store partial content responses.
    /// Fix: do not store (nor record as fresh) a response whose `statusCode` is 206 — or fail the request, since
    /// a 206 to a request without `Range` is not the image.
    func testA206PartialContentIsNotStoredAsTheWholeImage() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { _, _ in
            RawImageResponse.with(status: "206 Partial Content",
                          ["Content-Range: bytes 0-\(png.count - 1)/\(png.count * 2)", "Cache-Control: max-age=600", "ETag: \"v1\""],
                          body: png)
        }
        raw = server
        let path = "/partial.png"
        let url = server.url(path)
        _ = manager.loadAndWait(url)
        XCTAssertFalse(try isOnDisk(url), "a partial content response must not be stored by a cache without Range support")
        _ = manager.loadAndWait(url)
        XCTAssertEqual(server.requestHeads(for: path).count, 2, "nor reused from memory as a fresh whole image")
    }

    // MARK: - 304 handling (RFC 9111 §4.3.4)

    /// Wrong: when the stored response has no validator at all, the "revalidation" is an unconditional GET
    /// (`conditionalHeaders` is empty, ImageLoadTask+Network.swift:12-13). A 304 to it (a misbehaving origin or
    /// intermediary) is still taken as freshening the stored bytes: `canBeFreshened` returns true whenever the
    /// stored policy has no ETag (HTTPCachePolicy.swift:145-146), and `refreshed` then gives the old bytes the
    /// 304's new tag `"v2"` and its `max-age`. Every later revalidation sends `If-None-Match: "v2"`, is answered
    /// 304, and the old image is shown for good — the failure mode the different-ETag check was added to prevent.
    /// (The assertion `HTTPCachePolicy().canBeFreshened(by: 304 "v2") == true` in HTTPRevalidationReviewTests
    /// encodes this case.)
    /// RFC 9111 §4.3.4: a 304 with a strong validator selects only stored responses with that validator; a 304
    /// may update a validator-less stored response only when it carries no validator either. Nothing here
    /// matches, so the cache MUST NOT use it to update the stored response.
    /// Fix: in `didFetch`'s 304 branch, when the request carried no conditional headers
    /// (`cached.metadata.http?.hasValidators != true`) and the 304 names a validator, fetch anew
    /// (`fetch(revalidating: nil)`) as for a 304 naming another tag.
    func testA304ToARequestWithoutValidatorsDoesNotFreshenTheStoredBytes() throws {
        let old = try TestImages.png(width: 64, height: 48), new = try TestImages.png(width: 32, height: 16)
        let requests = Mutex(0)
        let server = try RawHTTPServer { _, _ in
            switch requests.withLock({ $0 += 1; return $0 }) {
            case 1: return RawImageResponse.with(["Cache-Control: no-cache"], body: old)
            case 2: return RawImageResponse.notModified(["ETag: \"v2\"", "Cache-Control: max-age=600"])
            default: return RawImageResponse.with(["ETag: \"v2\"", "Cache-Control: max-age=600"], body: new)
            }
        }
        raw = server
        let path = "/unvalidated.png"
        let url = server.url(path)
        XCTAssertEqual(manager.loadAndWait(url).image?.width, 64)
        let second = manager.loadAndWait(url)
        let heads = server.requestHeads(for: path)
        XCTAssertGreaterThanOrEqual(heads.count, 2)
        if heads.count >= 2 {
            let revalidation = heads[1].lowercased()
            XCTAssertFalse(revalidation.contains("if-none-match:") || revalidation.contains("if-modified-since:"),
                           "precondition: nothing to validate with, so the second request is unconditional")
        }
        XCTAssertNotEqual(second.source, .diskCache, "a 304 to an unconditional request validates nothing")
        XCTAssertNotEqual(second.image?.width, 64, "the old bytes are not the representation tagged \"v2\"")
        let stored = try manager.cache?.getImageData(forKey: url.absoluteString)
        let tag = try manager.cache?.getMetadata(forKey: url.absoluteString)?.http?.etag
        if tag == "\"v2\"" {
            XCTAssertEqual(stored, new, "the tag \"v2\" must only ever be stored with the bytes it names")
        }
    }

    // MARK: - Cache-Control directives (RFC 9111 §5.2.2)

    /// Wrong: `proxy-revalidate` is read as `must-revalidate` (CacheControl.swift:49), although `CacheControl`
    /// documents itself as the directives "that a private cache acts on".
    /// RFC 9111 §5.2.2.8: proxy-revalidate "has the same meaning as the must-revalidate response directive
    /// except that it does not apply to private caches". (No user-visible effect today: `HTTPCachePolicy` does
    /// not read `mustRevalidate`, and the manager never serves stale bytes; it becomes one as soon as anything
    /// does, e.g. stale-if-error.)
    /// Fix: drop `"proxy-revalidate"` from the `must-revalidate` case (ignore it, as `s-maxage` is).
    func testProxyRevalidateDoesNotApplyToAPrivateCache() {
        XCTAssertFalse(CacheControl(fieldValues: ["proxy-revalidate"]).mustRevalidate)
        XCTAssertFalse(CacheControl(fieldValues: ["public, max-age=60, proxy-revalidate"]).mustRevalidate)
        XCTAssertTrue(CacheControl(fieldValues: ["max-age=60, must-revalidate"]).mustRevalidate)
    }
}
