import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImage
import XCTest

/// Review of `.useHTTPCache` revalidation (RFC 9111 §4.3.3–4.3.4) through the whole pipeline, against a raw
/// origin that answers each conditional request exactly as the case needs.
final class HTTPRevalidationReviewTests: XCTestCase {
    private var directory: URL!
    private var manager: ImageManager!
    private var raw: RawHTTPServer?

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("revalidation-\(UUID().uuidString)")
        manager = ImageManager(cache: try ImageCache(path: directory.path), queue: FetchQueue(maxConcurrentTransfers: 4))
    }

    override func tearDown() {
        raw?.shutdown()
        manager = nil
        try? FileManager.default.removeItem(at: directory)
    }

    private func load(_ url: URL, file: StaticString = #filePath, line: UInt = #line)
        -> (image: Image?, source: ImageSource, error: WebImageError?) {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<(Image?, ImageSource, WebImageError?)>((nil, .none, nil))
        manager.requestImage(url: url, options: [.useHTTPCache]) { image, _, source, stage, error in
            guard stage != .progress else { return }
            box.withLock { $0 = (image, source, error) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "request timed out", file: file, line: line)
        return box.withLock { $0 }
    }

    private static func ok(_ fields: [String], body: Data) -> [UInt8] {
        let head = (["HTTP/1.1 200 OK", "Content-Type: image/png", "Content-Length: \(body.count)"] + fields)
            .joined(separator: "\r\n") + "\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }

    /// §4.3.4: "If none of the stored responses contain the same strong validator, then the cache MUST NOT use
    /// the new response to update any stored responses." A 304 naming another entity tag than the stored bytes'
    /// (a CDN node that already has the new file) used to freshen the old bytes and give them the new tag, so
    /// every later revalidation (`If-None-Match: "v2"`) was answered 304 and the old image was shown for good.
    func testA304NamingAnotherEntityTagDoesNotFreshenTheStoredBytes() throws {
        let old = try TestImages.png(width: 64, height: 48), new = try TestImages.png(width: 32, height: 16)
        let unconditional = Mutex(0)
        let server = try RawHTTPServer { _, head in
            if head.lowercased().contains("if-none-match:") {
                return Array("HTTP/1.1 304 Not Modified\r\nETag: \"v2\"\r\nCache-Control: max-age=600\r\n\r\n".utf8)
            }
            if unconditional.withLock({ $0 += 1; return $0 }) == 1 {
                return Self.ok(["ETag: \"v1\"", "Cache-Control: no-cache"], body: old)
            }
            return Self.ok(["ETag: \"v2\"", "Cache-Control: max-age=600"], body: new)
        }
        raw = server
        let url = server.url("/avatar.png")
        XCTAssertEqual(load(url).image?.width, 64)
        let second = load(url)
        XCTAssertNil(second.error)
        XCTAssertEqual(second.image?.width, 32, "the stored bytes are not the representation the 304 names")
        XCTAssertEqual(second.source, .remote)
        let stored = try XCTUnwrap(try manager.cache?.getMetadata(forKey: url.absoluteString)?.http)
        XCTAssertEqual(stored.etag, "\"v2\"")
        XCTAssertEqual(load(url).image?.width, 32, "and it stays the new image")
    }

    /// The cases that do select the stored response still freshen it: the same tag (weakly compared, as
    /// `If-None-Match` is), or a 304 with no tag at all.
    func testA304WithTheSameOrNoEntityTagServesTheStoredBytes() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let server = try RawHTTPServer { path, head in
            if head.lowercased().contains("if-none-match:") {
                let tag = path == "/same.png" ? "ETag: W/\"v1\"\r\n" : ""
                return Array("HTTP/1.1 304 Not Modified\r\n\(tag)Cache-Control: no-cache\r\n\r\n".utf8)
            }
            return Self.ok(["ETag: \"v1\"", "Cache-Control: no-cache"], body: png)
        }
        raw = server
        for path in ["/same.png", "/untagged.png"] {
            XCTAssertEqual(load(server.url(path)).source, .remote, path)
            let again = load(server.url(path))
            XCTAssertEqual(again.source, .diskCache, path)
            XCTAssertEqual(again.image?.width, 64, path)
            XCTAssertEqual(server.requestHeads(for: path).count, 2, path)
        }
    }

    /// §4.2.4 and §5.2.2.4: bytes stored with `no-cache` are never used without a successful validation. When
    /// the revalidation fails (the origin answers 500), the request fails; the stale bytes are not shown, and
    /// they stay stored for the next successful validation.
    func testAFailedRevalidationOfANoCacheEntryDoesNotServeItStale() throws {
        let png = try TestImages.png(width: 64, height: 48)
        let requests = Mutex(0)
        let server = try RawHTTPServer { _, head in
            let count = requests.withLock { $0 += 1; return $0 }
            if count == 2 { return Array("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n".utf8) }
            if head.lowercased().contains("if-none-match:") {
                return Array("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nCache-Control: no-cache\r\n\r\n".utf8)
            }
            return Self.ok(["ETag: \"v1\"", "Cache-Control: no-cache"], body: png)
        }
        raw = server
        let url = server.url("/no-cache.png")
        XCTAssertEqual(load(url).source, .remote)
        let failed = load(url)
        XCTAssertNil(failed.image, "no stale bytes without a validation")
        XCTAssertNotNil(failed.error)
        let again = load(url)
        XCTAssertEqual(again.source, .diskCache, "the stored bytes survived the failure and validate now")
        XCTAssertEqual(again.image?.width, 64)
    }

    /// `canBeFreshened(by:)` on its own: the tag compared weakly, an absent or invalid one accepted.
    func testWhichNotModifiedResponsesSelectTheStoredOne() {
        let url = URL(string: "http://origin.test/a.png")!
        func notModified(_ etag: String?) -> FetchResponse {
            FetchResponse(url: url, statusCode: 304, headers: etag.map { [FetchResponse.Header(name: "etag", value: $0)] } ?? [],
                          expectedContentLength: nil)
        }
        let stored = HTTPCachePolicy(etag: "\"v1\"")
        XCTAssertTrue(stored.canBeFreshened(by: notModified("\"v1\"")))
        XCTAssertTrue(stored.canBeFreshened(by: notModified("W/\"v1\"")))
        XCTAssertTrue(HTTPCachePolicy(etag: "W/\"v1\"").canBeFreshened(by: notModified("\"v1\"")))
        XCTAssertFalse(stored.canBeFreshened(by: notModified("\"v2\"")))
        XCTAssertFalse(stored.canBeFreshened(by: notModified("\"V1\"")), "entity tags are case-sensitive")
        XCTAssertTrue(stored.canBeFreshened(by: notModified(nil)))
        XCTAssertTrue(stored.canBeFreshened(by: notModified("not a tag, \"x\"")), "an invalid ETag is no tag")
        XCTAssertTrue(HTTPCachePolicy().canBeFreshened(by: notModified("\"v2\"")), "nothing stored to compare")
    }
}
