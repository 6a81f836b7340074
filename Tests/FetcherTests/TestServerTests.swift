import CWebImageCurl
import CWebImageCurlShims
import TestSupport
import XCTest

/// Each misbehaviour of `HTTPTestServer`, observed by a plain libcurl request made through the `wi_` shims.
final class TestServerTests: XCTestCase {
    private var server: HTTPTestServer!

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
    }

    override func tearDown() {
        server.shutdown()
    }

    private func payload(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    func testBytesAreServedAndCountedPerPath() throws {
        let data = payload(10_000)
        server.route("/a.jpg", .bytes(data, contentType: "image/jpeg"))
        let result = try PlainCurl.get(server.url("/a.jpg?x=1")) { $0.setHeaders(["Accept: image/*"]) }
        XCTAssertEqual(result.code, CURLE_OK)
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.body, data)
        XCTAssertEqual(result.header("Content-Type"), "image/jpeg")
        XCTAssertEqual(result.header("Content-Length"), "10000")
        XCTAssertEqual(server.requestCount(for: "/a.jpg"), 1)
        XCTAssertEqual(server.requests(for: "/a.jpg").first?.header("accept"), "image/*")
        XCTAssertEqual(server.requests(for: "/a.jpg").first?.uri, "/a.jpg?x=1")
        XCTAssertEqual(server.requestCount(for: "/other"), 0)
    }

    func testUnknownPathIs404AndAnyStatusIsSent() throws {
        XCTAssertEqual(try PlainCurl.get(server.url("/missing")).status, 404)
        server.route("/teapot", .status(418, body: "short and stout"))
        let result = try PlainCurl.get(server.url("/teapot"))
        XCTAssertEqual(result.status, 418)
        XCTAssertEqual(String(decoding: result.body, as: UTF8.self), "short and stout")
        server.route("/boom", .status(500))
        XCTAssertEqual(try PlainCurl.get(server.url("/boom")) { $0.set(CURLOPT_FAILONERROR, 1) }.code,
                       CURLE_HTTP_RETURNED_ERROR)
    }

    func testDelayTripsAShortTimeoutButNotALongOne() throws {
        server.route("/late", .bytes([1, 2, 3]).delayed(by: 0.6))
        let short = try PlainCurl.get(server.url("/late")) { $0.set(CURLOPT_TIMEOUT_MS, 150) }
        XCTAssertEqual(short.code, CURLE_OPERATION_TIMEDOUT)
        let long = try PlainCurl.get(server.url("/late")) { $0.set(CURLOPT_TIMEOUT_MS, 10_000) }
        XCTAssertEqual(long.code, CURLE_OK)
        XCTAssertEqual(long.body, [1, 2, 3])
    }

    func testDripArrivesInPiecesAndCanOutlastATimeout() throws {
        let data = payload(1_000)
        server.route("/drip", .drip(data, chunk: 100, interval: 0.03))
        let whole = try PlainCurl.get(server.url("/drip"))
        XCTAssertEqual(whole.code, CURLE_OK)
        XCTAssertEqual(whole.body, data)
        XCTAssertGreaterThan(whole.writeCalls, 3, "a drip arrives in several reads")
        let cut = try PlainCurl.get(server.url("/drip")) { $0.set(CURLOPT_TIMEOUT_MS, 120) }
        XCTAssertEqual(cut.code, CURLE_OPERATION_TIMEDOUT)
        XCTAssertLessThan(cut.body.count, data.count)
    }

    func testCloseMidBodyIsAPartialFile() throws {
        server.route("/cut", .closeMidBody(payload(5_000), after: 1_000))
        let result = try PlainCurl.get(server.url("/cut"))
        XCTAssertEqual(result.code, CURLE_PARTIAL_FILE)
        XCTAssertEqual(result.body.count, 1_000)
    }

    func testWrongContentLength() throws {
        server.route("/long", .wrongContentLength(payload(1_000), declared: 2_000))
        XCTAssertEqual(try PlainCurl.get(server.url("/long")).code, CURLE_PARTIAL_FILE)
        server.route("/short", .wrongContentLength(payload(1_000), declared: 10))
        let short = try PlainCurl.get(server.url("/short"))
        XCTAssertEqual(short.code, CURLE_OK)
        XCTAssertEqual(short.body.count, 10, "the client reads what was declared")
    }

    func testResetMidBodyIsAReceiveError() throws {
        server.route("/reset", .reset(payload(200_000), after: 100))
        let result = try PlainCurl.get(server.url("/reset"))
        XCTAssertTrue([CURLE_RECV_ERROR, CURLE_PARTIAL_FILE].contains(result.code), "got \(result.code)")
        XCTAssertLessThan(result.body.count, 200_000)
    }

    func testChunkedIsReassembled() throws {
        let data = payload(70_001)
        server.route("/chunked", .chunked(data, chunkSize: 1_000))
        let result = try PlainCurl.get(server.url("/chunked"))
        XCTAssertEqual(result.code, CURLE_OK)
        XCTAssertEqual(result.header("Transfer-Encoding"), "chunked")
        XCTAssertNil(result.header("Content-Length"))
        XCTAssertEqual(result.body, data)
        server.route("/empty-chunked", .chunked([]))
        XCTAssertEqual(try PlainCurl.get(server.url("/empty-chunked")).body, [])
    }

    func testGzipAndDeflateAreRealEncodings() throws {
        let data = Array(String(repeating: "compressible text ", count: 2_000).utf8)
        server.route("/gzip", .gzip(data))
        server.route("/deflate", .deflate(data))
        let raw = try PlainCurl.get(server.url("/gzip"))
        XCTAssertEqual(raw.header("Content-Encoding"), "gzip")
        XCTAssertEqual(Array(raw.body.prefix(2)), [0x1f, 0x8b], "gzip magic")
        XCTAssertLessThan(raw.body.count, data.count / 10)
        for path in ["/gzip", "/deflate"] {
            let decoded = try PlainCurl.get(server.url(path)) { $0.set(CURLOPT_ACCEPT_ENCODING, "") }
            XCTAssertEqual(decoded.code, CURLE_OK, path)
            XCTAssertEqual(decoded.body, data, path)
        }
    }

    func testRedirectsAndRedirectLoops() throws {
        server.route("/old", .redirect(to: "/new", status: 301))
        server.route("/new", .bytes([9, 9]))
        let followed = try PlainCurl.get(server.url("/old")) { $0.set(CURLOPT_FOLLOWLOCATION, 1) }
        XCTAssertEqual(followed.code, CURLE_OK)
        XCTAssertEqual(followed.body, [9, 9])
        XCTAssertEqual(server.requestCount(for: "/old"), 1)
        XCTAssertEqual(server.requestCount(for: "/new"), 1)

        server.route("/loop", .redirect(to: "/loop"))
        let loop = try PlainCurl.get(server.url("/loop")) {
            $0.set(CURLOPT_FOLLOWLOCATION, 1)
            $0.set(CURLOPT_MAXREDIRS, 5)
        }
        XCTAssertEqual(loop.code, CURLE_TOO_MANY_REDIRECTS)
        XCTAssertEqual(server.requestCount(for: "/loop"), 6)
    }

    func testETagAndLastModifiedGive304OnAMatch() throws {
        let date = "Wed, 21 Oct 2015 07:28:00 GMT"
        server.route("/v", .bytes([1, 2, 3]).withETag("\"v1\"").withLastModified(date))
        let first = try PlainCurl.get(server.url("/v"))
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.header("ETag"), "\"v1\"")
        XCTAssertEqual(first.header("Last-Modified"), date)
        let byETag = try PlainCurl.get(server.url("/v")) { $0.setHeaders(["If-None-Match: \"v1\""]) }
        XCTAssertEqual(byETag.status, 304)
        XCTAssertEqual(byETag.body, [])
        let stale = try PlainCurl.get(server.url("/v")) { $0.setHeaders(["If-None-Match: \"v0\""]) }
        XCTAssertEqual(stale.status, 200)
        let byDate = try PlainCurl.get(server.url("/v")) { $0.setHeaders(["If-Modified-Since: \(date)"]) }
        XCTAssertEqual(byDate.status, 304)
    }

    func testBasicAuth() throws {
        server.route("/private", .bytes([7]).requiringBasicAuth(user: "ann", password: "s3cret"))
        let anonymous = try PlainCurl.get(server.url("/private"))
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.header("WWW-Authenticate"), "Basic realm=\"test\"")
        XCTAssertEqual(try PlainCurl.get(server.url("/private")) { $0.set(CURLOPT_USERPWD, "ann:wrong") }.status, 401)
        let good = try PlainCurl.get(server.url("/private")) { $0.set(CURLOPT_USERPWD, "ann:s3cret") }
        XCTAssertEqual(good.status, 200)
        XCTAssertEqual(good.body, [7])
    }

    func testCookiesAreSetAndEchoed() throws {
        server.route("/login", .bytes([1]).settingCookies(["session=abc; Path=/"]))
        server.route("/echo", .cookieEcho())
        let curl = try PlainCurl()
        XCTAssertEqual(String(decoding: curl.get(server.url("/echo")).body, as: UTF8.self), "")
        curl.set(CURLOPT_COOKIEFILE, "") // enable the cookie engine
        let login = curl.get(server.url("/login"))
        XCTAssertEqual(login.header("Set-Cookie"), "session=abc; Path=/")
        XCTAssertEqual(String(decoding: curl.get(server.url("/echo")).body, as: UTF8.self), "session=abc")
    }

    func testConnectionsAreCountedForKeepAlive() throws {
        server.route("/k", .bytes(payload(100)))
        let curl = try PlainCurl()
        for _ in 0..<3 { XCTAssertEqual(curl.get(server.url("/k")).code, CURLE_OK) }
        XCTAssertEqual(server.connectionCount, 1, "one handle reuses its connection")
        // FORBID_REUSE closes each connection after its transfer: the first of these three still rides the
        // open connection, the next two need one each.
        curl.set(CURLOPT_FORBID_REUSE, 1)
        for _ in 0..<3 { XCTAssertEqual(curl.get(server.url("/k")).code, CURLE_OK) }
        XCTAssertEqual(server.connectionCount, 3)
        XCTAssertEqual(server.requestCount(for: "/k"), 6)
        XCTAssertEqual(server.totalRequestCount, 6)
    }

    func testRefusedURLRefuses() throws {
        XCTAssertEqual(try PlainCurl.get(try HTTPTestServer.refusedURL()).code, CURLE_COULDNT_CONNECT)
    }

    func testDynamicRouteSeesTheRequest() throws {
        server.route("/who") { request in .status(200, body: request.header("User-Agent") ?? "none") }
        let result = try PlainCurl.get(server.url("/who")) { $0.set(CURLOPT_USERAGENT, "probe/1") }
        XCTAssertEqual(String(decoding: result.body, as: UTF8.self), "probe/1")
    }
}
