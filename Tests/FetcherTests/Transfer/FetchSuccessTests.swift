import Fetcher
import Foundation
import TestSupport
import XCTest

/// Successful fetches through the real libcurl against the loopback server.
final class FetchSuccessTests: FetchTestCase {
    func testSizesFromZeroTo20MB() throws {
        for size in [0, 1, 1_000, 65_537, 1_048_576, 20 * 1_048_576] {
            let data = testPayload(size, seed: UInt8(truncatingIfNeeded: size))
            server.route("/size-\(size)", .bytes(data, contentType: "image/jpeg"))
            let events = fetchAndWait(request("/size-\(size)"), on: queue)
            XCTAssertEqual(events.body, data, "size \(size)")
            XCTAssertEqual(events.responses.count, 1, "size \(size)")
            XCTAssertEqual(events.responses.first?.statusCode, 200)
            XCTAssertEqual(events.responses.first?.expectedContentLength, Int64(size))
            XCTAssertEqual(events.responses.first?.value(forHeader: "content-type"), "image/jpeg")
            XCTAssertEqual(events.chunks.reduce(0) { $0 + $1.count }, size, "chunks add up to the body")
            XCTAssertEqual(events.progress.last ?? 0, Int64(size))
            XCTAssertEqual(events.progress, events.progress.sorted(), "progress never goes back")
        }
    }

    func testDefaultAcceptHeaderAndCustomHeaders() throws {
        server.route("/h", .bytes([1]))
        _ = fetchAndWait(request("/h"), on: queue)
        XCTAssertEqual(server.requests(for: "/h").last?.header("Accept"), "image/webp,image/apng,image/*;q=0.8")
        var custom = request("/h")
        custom.headers = ["Accept": "image/png", "X-Trace": "42"]
        _ = fetchAndWait(custom, on: queue)
        XCTAssertEqual(server.requests(for: "/h").last?.header("Accept"), "image/png")
        XCTAssertEqual(server.requests(for: "/h").last?.header("X-Trace"), "42")
    }

    func testChunkedBodyHasUnknownExpectedLength() throws {
        let data = testPayload(300_000)
        server.route("/chunked", .chunked(data, chunkSize: 7_000))
        let events = fetchAndWait(request("/chunked"), on: queue)
        XCTAssertEqual(events.body, data)
        XCTAssertEqual(events.responses.first?.expectedContentLength, nil)
        XCTAssertEqual(events.expected.compactMap { $0 }, [])
    }

    func testGzipAndDeflateAreDecoded() throws {
        let data = Data(String(repeating: "webimage ", count: 50_000).utf8)
        server.route("/gzip", .gzip(data))
        server.route("/deflate", .deflate(data))
        for path in ["/gzip", "/deflate"] {
            let events = fetchAndWait(request(path), on: queue)
            XCTAssertEqual(events.body, data, path)
            XCTAssertNil(events.responses.first?.expectedContentLength, "the encoded length is not the body's")
        }
        XCTAssertTrue(server.requests(for: "/gzip").first?.header("Accept-Encoding")?.contains("gzip") ?? false)
    }

    func testKeepAliveReusesOneConnection() throws {
        server.route("/k", .bytes(testPayload(10_000)))
        for _ in 0..<10 { XCTAssertNotNil(fetchAndWait(request("/k"), on: queue).body) }
        XCTAssertEqual(server.requestCount(for: "/k"), 10)
        XCTAssertEqual(server.connectionCount, 1, "sequential requests share one kept-alive connection")
    }

    func testRedirectsAreFollowed() throws {
        server.route("/a", .redirect(to: "/b", status: 301))
        server.route("/b", .redirect(to: "/c", status: 307))
        server.route("/c", .bytes([3, 2, 1]))
        let events = fetchAndWait(request("/a"), on: queue)
        XCTAssertEqual(events.body, Data([3, 2, 1]))
        XCTAssertEqual(events.responses.first?.url, server.url("/c"))
        XCTAssertEqual(events.responses.count, 1, "one response: the final one")
        XCTAssertEqual(server.requestCount(for: "/c"), 1)
    }

    func testFileURLsLoadThroughTheSameAPI() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetcher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = testPayload(123_456)
        let file = directory.appendingPathComponent("image one.jpg")
        try data.write(to: file)
        let events = fetchAndWait(FetchRequest(url: file), on: queue)
        XCTAssertEqual(events.body, data)
        XCTAssertNil(events.responses.first?.statusCode)
        XCTAssertEqual(events.responses.first?.expectedContentLength, 123_456)
        XCTAssertEqual(events.progress.last, 123_456)

        let empty = directory.appendingPathComponent("empty")
        try Data().write(to: empty)
        XCTAssertEqual(fetchAndWait(FetchRequest(url: empty), on: queue).body, Data())

        let missing = fetchAndWait(FetchRequest(url: directory.appendingPathComponent("missing")), on: queue)
        guard case .fileUnreadable? = missing.error else { return XCTFail("got \(String(describing: missing.result))") }
        XCTAssertFalse(missing.error?.isTransient ?? true)
    }

    func testAsyncFetch() async throws {
        server.route("/async", .bytes([5, 6]))
        let result = try await queue.fetch(request("/async"))
        XCTAssertEqual(result.body, Data([5, 6]))
        XCTAssertEqual(result.response.statusCode, 200)
        do {
            _ = try await queue.fetch(request("/nowhere"))
            XCTFail("a 404 throws")
        } catch {
            XCTAssertEqual(error.httpStatusCode, 404)
        }
    }
}
