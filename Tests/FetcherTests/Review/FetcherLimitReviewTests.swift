@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// Review: `maximumResponseSize` boundaries for the new `FileSource` reader and for HTTP (plain, gzip).
final class FetcherLimitReviewTests: FetchTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("review-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder) // best effort: a temporary folder
        super.tearDown()
    }

    private func fileRequest(_ name: String, size: Int, limit: Int64?) throws -> FetchRequest {
        let url = folder.appendingPathComponent(name)
        try testPayload(size).write(to: url)
        var request = FetchRequest(url: url, timeout: 5)
        request.maximumResponseSize = limit
        return request
    }

    func testFileExactlyAtTheLimitIsRead() throws {
        let events = fetchAndWait(try fileRequest("at.bin", size: 300_000, limit: 300_000), on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.body, testPayload(300_000))
    }

    func testFileOneByteOverTheLimitIsRefused() throws {
        let events = fetchAndWait(try fileRequest("over.bin", size: 300_001, limit: 300_000), on: queue)
        XCTAssertEqual(events.error, .responseTooLarge(limit: 300_000))
    }

    func testEmptyFileIsAnEmptyBody() throws {
        let events = fetchAndWait(try fileRequest("empty.bin", size: 0, limit: nil), on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.body?.count, 0)
    }

    func testEmptyFileWithLimitZeroIsAnEmptyBody() throws {
        let events = fetchAndWait(try fileRequest("empty0.bin", size: 0, limit: 0), on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.body?.count, 0)
    }

    func testFileWithLimitZeroAndOneByteIsRefused() throws {
        let events = fetchAndWait(try fileRequest("one.bin", size: 1, limit: 0), on: queue)
        XCTAssertEqual(events.error, .responseTooLarge(limit: 0))
    }

    func testHTTPLimitZero() {
        server.route("/review-empty", .bytes([UInt8]()))
        server.route("/review-one", .bytes([UInt8]([7])))
        server.route("/review-one-chunked", .chunked([UInt8]([7]), chunkSize: 1))
        var empty = request("/review-empty")
        empty.maximumResponseSize = 0
        let emptyEvents = fetchAndWait(empty, on: queue)
        XCTAssertNil(emptyEvents.error, "an empty body fits a limit of 0")
        XCTAssertEqual(emptyEvents.body?.count, 0)
        for path in ["/review-one", "/review-one-chunked"] {
            var one = request(path)
            one.maximumResponseSize = 0
            XCTAssertEqual(fetchAndWait(one, on: queue).error, .responseTooLarge(limit: 0), path)
        }
    }

    /// The limit is documented as "counted after Content-Encoding decoding". The payload is incompressible,
    /// so its gzip wire size (the declared Content-Length) is a little over 200,000 bytes while it decodes to
    /// exactly 200,000: it must be delivered.
    func testGzipBodyDecodingToExactlyTheLimitIsDelivered() {
        let payload = testPayload(200_000)
        server.route("/review-gzip", .gzip(Array(payload)))
        var limited = request("/review-gzip")
        limited.maximumResponseSize = 200_000
        let events = fetchAndWait(limited, on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.body, payload)
        var under = request("/review-gzip")
        under.maximumResponseSize = 199_999
        XCTAssertEqual(fetchAndWait(under, on: queue).error, .responseTooLarge(limit: 199_999))
    }

    func testChunkedBodyExactlyAtTheLimitIsDelivered() {
        let payload = testPayload(200_000)
        server.route("/review-chunked", .chunked(Array(payload), chunkSize: 10_000))
        var limited = request("/review-chunked")
        limited.maximumResponseSize = 200_000
        let events = fetchAndWait(limited, on: queue)
        XCTAssertNil(events.error)
        XCTAssertEqual(events.body, payload)
    }
}
