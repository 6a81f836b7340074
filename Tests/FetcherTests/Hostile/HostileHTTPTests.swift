@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// Hostile HTTP sources with the library's default limits: each ends with a typed error, within the request's
/// timeout plus one second, holding at most the response size limit (the child-process runs of
/// `HostileSourceMemoryTests` measure the peak RSS of the same cases).
final class HostileHTTPTests: FetchTestCase {
    /// Short, so a case that waits for the timeout keeps the suite fast; bounds are this plus 1 s.
    private let timeout = 2.0
    private var limit: Int64 { FetchRequest.defaultMaximumResponseSize }

    private func hostile(_ path: String) -> FetchRequest { request(path, timeout: timeout) }

    func testDefaultsAreBounded() {
        let request = FetchRequest(url: server.url("/"))
        XCTAssertEqual(request.maximumResponseSize, FetchRequest.defaultMaximumResponseSize)
        XCTAssertLessThanOrEqual(FetchRequest.defaultMaximumResponseSize, 64 << 20)
        XCTAssertEqual(request.maximumRedirects, 10)
        XCTAssertEqual(request.connectTimeout, 10)
        XCTAssertEqual(request.sourcePolicy, .allowAll)
        XCTAssertTrue(request.allowsFileURLs)
    }

    func testEndlessChunkedBodyStopsAtTheLimit() {
        server.route("/endless", .endlessRandom(seed: 13))
        let events = fetchHostile("endless chunked random body", hostile("/endless"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .responseTooLarge(limit: limit))
        XCTAssertLessThanOrEqual(events.progress.last ?? 0, limit)
    }

    func testGzipBombStopsAtTheLimitOfDecodedBytes() {
        server.route("/bomb.gz", .zeroBomb(decodedBytes: 4 << 30, encoding: .gzip))
        let events = fetchHostile("gzip bomb (4 GiB of zeros)", hostile("/bomb.gz"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .responseTooLarge(limit: limit))
        XCTAssertLessThanOrEqual(events.progress.last ?? 0, limit, "counted after decoding")
    }

    func testDeflateBombStopsAtTheLimitOfDecodedBytes() {
        server.route("/bomb.z", .zeroBomb(decodedBytes: 4 << 30, encoding: .deflate))
        let events = fetchHostile("deflate bomb (4 GiB of zeros)", hostile("/bomb.z"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .responseTooLarge(limit: limit))
    }

    func testHugeDeclaredLengthIsRefusedBeforeTheBody() {
        server.route("/huge", .hugeDeclaredLength(10_000_000_000))
        let events = fetchHostile("Content-Length 10 GB", hostile("/huge"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .responseTooLarge(limit: limit))
        XCTAssertTrue(events.chunks.isEmpty, "refused on the header, before any body byte")
    }

    func testDeclaredLengthJustOverTheLimitIsRefusedBeforeTheBody() {
        var request = hostile("/over")
        request.maximumResponseSize = 1_000
        server.route("/over", .bytes(testPayload(1_001)))
        let events = fetchAndWait(request, on: queue)
        XCTAssertEqual(events.error, .responseTooLarge(limit: 1_000))
        XCTAssertTrue(events.chunks.isEmpty)
        server.route("/exact", .bytes(testPayload(1_000)))
        var exact = hostile("/exact")
        exact.maximumResponseSize = 1_000
        XCTAssertEqual(fetchAndWait(exact, on: queue).body?.count, 1_000, "exactly the limit is fine")
    }

    func testContentLengthThatLiesSmallNeverYieldsMoreThanDeclared() {
        server.route("/liar", .wrongContentLength(testPayload(5_000_000), declared: 1_000))
        var request = hostile("/liar")
        request.maximumResponseSize = 100_000
        let events = fetchHostile("Content-Length 1000, then 5 MB", request, on: queue, bound: timeout + 1)
        XCTAssertEqual(events.body, testPayload(5_000_000).prefix(1_000), "the declared bytes, not one more")
        XCTAssertLessThanOrEqual(events.progress.last ?? 0, 1_000)
    }

    func testOneBytePerSecondDripEndsAtTheTimeout() {
        server.route("/drip", .drip(testPayload(100), chunk: 1, interval: 1))
        let events = fetchHostile("1 byte/s drip", hostile("/drip"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .timedOut(curlCode: 28))
    }

    func testStallBeforeTheStatusLineEndsAtTheTimeout() {
        server.route("/stall", HTTPTestResponse.bytes([1]).delayed(by: 30))
        let events = fetchHostile("stall before the status line", hostile("/stall"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .timedOut(curlCode: 28))
    }

    func testRedirectLoopStopsAtTheDefaultLimit() {
        server.route("/loop", .redirect(to: "/loop"))
        let events = fetchHostile("redirect loop", hostile("/loop"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .tooManyRedirects(limit: 10))
        XCTAssertEqual(server.requestCount(for: "/loop"), 11, "the first request and 10 redirects")
    }

    func testRedirectToAFileURLIsRefusedAndNamed() throws {
        server.route("/sneaky", .redirect(to: "file:///etc/passwd"))
        let events = fetchHostile("redirect to file:///etc/passwd", hostile("/sneaky"), on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .fileURLRefused(try XCTUnwrap(URL(string: "file:///etc/passwd"))))
        XCTAssertNil(events.body)
    }

    func testRedirectToARefusedAddressSendsItNothing() throws {
        // The first hop goes to ::ffff:127.0.0.1, which the allow-list holds; the redirect goes to 127.0.0.1 (the
        // same server), which it does not: the second hop is refused before connecting.
        server.route("/hop", .redirect(to: "http://127.0.0.1:\(server.port)/secret"))
        server.route("/secret", .bytes([1]))
        var request = FetchRequest(url: try XCTUnwrap(URL(string: "http://[::ffff:127.0.0.1]:\(server.port)/hop")),
                                   timeout: timeout)
        request.sourcePolicy = .publicOnly(allowing: [try XCTUnwrap(IPNetwork("::ffff:127.0.0.1/128"))])
        let events = fetchHostile("redirect to 127.0.0.1 (public-only)", request, on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .addressRefused(address: "127.0.0.1", category: .loopback))
        XCTAssertEqual(server.requestCount(for: "/hop"), 1, "the allowed hop was fetched")
        XCTAssertEqual(server.requestCount(for: "/secret"), 0, "nothing was sent to the refused address")
        XCTAssertEqual(server.connectionCount, 1, "no connection was made for the refused hop")
    }
}
