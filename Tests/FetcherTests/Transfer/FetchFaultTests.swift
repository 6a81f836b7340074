import Fetcher
import Foundation
import TestSupport
import XCTest

/// Each fault gives the right error exactly once, and no handle is left behind (checked in tearDown).
final class FetchFaultTests: FetchTestCase {
    func testTimeoutBeforeAnyByte() {
        server.route("/late", .bytes([1]).delayed(by: 3))
        let events = fetchAndWait(request("/late", timeout: 0.3), on: queue)
        XCTAssertEqual(events.error, .timedOut(curlCode: 28))
        XCTAssertTrue(events.error?.isTransient ?? false)
    }

    func testSlowDripPastTheTimeout() {
        server.route("/drip", .drip(testPayload(4_000), chunk: 100, interval: 0.05))
        let events = fetchAndWait(request("/drip", timeout: 0.4), on: queue)
        XCTAssertEqual(events.error, .timedOut(curlCode: 28))
        XCTAssertFalse(events.chunks.isEmpty, "some of the body arrived before the timeout")
        XCTAssertLessThan(events.chunks.reduce(0) { $0 + $1.count }, 4_000)
    }

    func testConnectionRefused() throws {
        let events = fetchAndWait(FetchRequest(url: try HTTPTestServer.refusedURL("/x")), on: queue)
        guard case .connectionFailed(let code, let osErrno, _)? = events.error else {
            return XCTFail("got \(String(describing: events.result))")
        }
        XCTAssertEqual(code, 7)
        XCTAssertEqual(osErrno, ECONNREFUSED)
    }

    func testResetMidBody() {
        server.route("/reset", .reset(testPayload(500_000), after: 1_000))
        let events = fetchAndWait(request("/reset"), on: queue)
        switch events.error {
        case .connectionLost?, .incompleteBody?: break
        default: XCTFail("got \(String(describing: events.result))")
        }
    }

    func testWrongContentLengthAndEarlyCloseAreErrors() {
        server.route("/long", .wrongContentLength(testPayload(1_000), declared: 2_000))
        XCTAssertEqual(fetchAndWait(request("/long"), on: queue).error, .incompleteBody(received: 1_000, expected: 2_000))
        server.route("/cut", .closeMidBody(testPayload(10_000), after: 4_000))
        XCTAssertEqual(fetchAndWait(request("/cut"), on: queue).error, .incompleteBody(received: 4_000, expected: 10_000))
    }

    func testHTTPErrorsCarryTheStatus() {
        server.route("/gone", .status(410, body: "gone").withHeader("X-Why", "removed"))
        server.route("/boom", .status(500, body: "oops"))
        for (path, status) in [("/missing", 404), ("/gone", 410), ("/boom", 500)] {
            let events = fetchAndWait(request(path), on: queue)
            XCTAssertEqual(events.error?.httpStatusCode, status, path)
            XCTAssertTrue(events.responses.isEmpty, "no response callback for an error status")
            XCTAssertTrue(events.chunks.isEmpty, "an error page is not image data")
            XCTAssertEqual(events.error?.isTransient, status >= 500, path)
        }
        if case .httpStatus(_, let response)? = fetchAndWait(request("/gone"), on: queue).error {
            XCTAssertEqual(response.value(forHeader: "x-why"), "removed")
        } else {
            XCTFail("410 is an httpStatus error")
        }
    }

    func testNotModified() {
        server.route("/v", .bytes([1, 2]).withETag("\"abc\""))
        let first = fetchAndWait(request("/v"), on: queue)
        XCTAssertEqual(first.responses.first?.value(forHeader: "ETag"), "\"abc\"")
        var revalidate = request("/v")
        revalidate.headers["If-None-Match"] = "\"abc\""
        let second = fetchAndWait(revalidate, on: queue)
        guard case .notModified(let response)? = second.error else {
            return XCTFail("got \(String(describing: second.result))")
        }
        XCTAssertEqual(response.statusCode, 304)
        XCTAssertEqual(response.value(forHeader: "ETag"), "\"abc\"")
    }

    func testRedirectLoopStopsAtTheLimit() {
        server.route("/loop", .redirect(to: "/loop"))
        var looping = request("/loop")
        looping.maximumRedirects = 3
        XCTAssertEqual(fetchAndWait(looping, on: queue).error, .tooManyRedirects(limit: 3))
        XCTAssertEqual(server.requestCount(for: "/loop"), 4)
    }

    func testOversizeBodiesAreStopped() {
        server.route("/declared", .bytes(testPayload(1_000_000)))
        server.route("/chunked", .chunked(testPayload(1_000_000), chunkSize: 10_000))
        server.route("/bomb", .gzip([UInt8](repeating: 0, count: 5_000_000)))
        for path in ["/declared", "/chunked", "/bomb"] {
            var limited = request(path)
            limited.maximumResponseSize = 100_000
            let events = fetchAndWait(limited, on: queue)
            XCTAssertEqual(events.error, .responseTooLarge(limit: 100_000), path)
            XCTAssertLessThanOrEqual(events.chunks.reduce(0) { $0 + $1.count }, 100_000, path)
        }
        var roomy = request("/declared")
        roomy.maximumResponseSize = 1_000_000
        XCTAssertEqual(fetchAndWait(roomy, on: queue).body?.count, 1_000_000, "exactly the limit is fine")
    }

    func testInvalidURLs() {
        for string in ["ftp://127.0.0.1/a.jpg", "gopher://x/"] {
            guard let url = URL(string: string) else { return XCTFail(string) }
            XCTAssertEqual(fetchAndWait(FetchRequest(url: url), on: queue).error, .invalidURL(string))
        }
    }

    func testRedirectToFileIsRefused() {
        server.route("/sneaky", .redirect(to: "file:///etc/passwd"))
        let events = fetchAndWait(request("/sneaky"), on: queue)
        XCTAssertNotNil(events.error)
        XCTAssertNil(events.body)
    }

    func testBasicAuth() {
        server.route("/private", .bytes([42]).requiringBasicAuth(user: "ann", password: "pw"))
        XCTAssertEqual(fetchAndWait(request("/private"), on: queue).error?.httpStatusCode, 401)
        var wrong = request("/private")
        wrong.credentials = .init(user: "ann", password: "nope")
        XCTAssertEqual(fetchAndWait(wrong, on: queue).error?.httpStatusCode, 401)
        var right = request("/private")
        right.credentials = .init(user: "ann", password: "pw")
        XCTAssertEqual(fetchAndWait(right, on: queue).body, Data([42]))
    }

    func testCookiesAreStoredAndSentOnlyWhenEnabled() {
        server.route("/login", .bytes([1]).settingCookies(["token=xyz; Path=/"]))
        server.route("/echo", .cookieEcho())
        var login = request("/login")
        login.handlesCookies = true
        XCTAssertEqual(fetchAndWait(login, on: queue).responses.first?.values(forHeader: "Set-Cookie"),
                       ["token=xyz; Path=/"])
        var echo = request("/echo")
        echo.handlesCookies = true
        XCTAssertEqual(fetchAndWait(echo, on: queue).body, Data("token=xyz".utf8), "the stored cookie is sent")
        XCTAssertEqual(fetchAndWait(request("/echo"), on: queue).body, Data(), "no cookies when disabled")
    }

    func testInvalidCertificateRejectedByDefaultAcceptedWithTheOption() throws {
        let tls: TLSTestServer
        do { tls = try TLSTestServer.start() } catch let error as TLSTestServer.Unavailable {
            throw XCTSkip(error.description)
        }
        defer { tls.shutdown() }
        let strict = fetchAndWait(FetchRequest(url: tls.url, timeout: 10), on: queue)
        guard case .tlsFailure(let code, _)? = strict.error else {
            return XCTFail("got \(String(describing: strict.result))")
        }
        XCTAssertEqual(code, 60, "CURLE_PEER_FAILED_VERIFICATION")
        var lenient = FetchRequest(url: tls.url, timeout: 10)
        lenient.allowsInvalidCertificates = true
        let accepted = fetchAndWait(lenient, on: queue)
        XCTAssertEqual(accepted.responses.first?.statusCode, 200)
        XCTAssertFalse(accepted.body?.isEmpty ?? true)
    }
}
