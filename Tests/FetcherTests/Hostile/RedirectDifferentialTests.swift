@testable import Fetcher
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Redirects written to make two parsers disagree. Before, the allow-list check read `Location` with our own
/// header parser while libcurl followed its own reading: `Location : <allowed>` then `Location: <foreign>`,
/// an empty `Location:` first, or a status line between two fields sent the check to one host and the
/// transfer to another, and a 3xx without a target failed open. Now the only target is libcurl's
/// (`CURLINFO_REDIRECT_URL`), checked before a byte goes to it.
///
/// "127.0.0.1" is the allowed host, "localhost" the foreign one: both reach the same raw origin, which records
/// every request, so a test sees whether the foreign path was ever asked for.
final class RedirectDifferentialTests: XCTestCase {
    private var origin: RawHTTPServer!
    private var network: NetworkFixture?
    private var queue: FetchQueue! { network?.queue }
    private let image = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nabc"

    override func tearDown() {
        network?.tearDown(self)
        origin?.shutdown()
    }

    /// Starts the origin; `responses` is evaluated once its port is known (the targets name it).
    private func start(_ responses: @autoclosure () -> [String: String]) throws {
        let table = Mutex<[String: String]>([:])
        origin = try RawHTTPServer { path, _ in
            Array((table.withLock { $0[path] } ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n").utf8)
        }
        let made = responses()
        table.withLock { $0 = made }
        network = NetworkFixture()
    }

    private var port: Int { origin.port }
    private var foreign: String { "http://localhost:\(port)/evil" }
    private var allowed: String { "http://127.0.0.1:\(port)/ok" }

    private func redirect(_ fields: String, status: String = "302 Found") -> String {
        "HTTP/1.1 \(status)\r\n\(fields)Content-Length: 0\r\n\r\n"
    }

    private func fetch(_ path: String, allowedHosts: [String] = ["127.0.0.1"], configure: (inout FetchRequest) -> Void = { _ in })
        -> Result<FetchResult, FetchError>? {
        var request = FetchRequest(url: origin.url(path), timeout: 5)
        request.sourcePolicy = SourcePolicy(isPublicOnly: false, allowedHosts: allowedHosts)
        configure(&request)
        return fetchAndWait(request, on: queue).result
    }

    private func assertRefusedToForeign(_ name: String, path: String = "/start",
                                        file: StaticString = #filePath, line: UInt = #line) {
        let result = fetch(path)
        guard case .failure(.redirectRefused(let target))? = result else {
            return XCTFail("\(name): got \(String(describing: result))", file: file, line: line)
        }
        XCTAssertEqual(target.host, "localhost", name, file: file, line: line)
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0, "\(name): the foreign path was never asked for",
                       file: file, line: line)
    }

    func testASpaceBeforeTheColonDoesNotHideTheTargetLibcurlFollows() throws {
        try start(["/start": redirect("Location : \(allowed)\r\nLocation: \(foreign)\r\n"), "/ok": image, "/evil": image])
        assertRefusedToForeign("'Location :' then 'Location:'")
    }

    func testAnEmptyLocationFirstDoesNotFailOpen() throws {
        try start(["/start": redirect("Location:\r\nLocation: \(foreign)\r\n"), "/ok": image, "/evil": image])
        assertRefusedToForeign("empty Location first")
    }

    func testAStatusLineBetweenFieldsDoesNotStartANewResponse() throws {
        try start(["/start": redirect("Location: \(foreign)\r\nHTTP/1.1 302 Found\r\nLocation: \(allowed)\r\n"),
                   "/ok": image, "/evil": image])
        // libcurl 7.88 refuses the head ("Header without colon"); a later one might follow the first Location.
        // Either way the foreign target is never fetched, and nothing passes as a success.
        let result = fetch("/start")
        if case .success? = result { XCTFail("a status line between fields must not pass") }
        if case .failure(.redirectRefused(let target))? = result { XCTAssertEqual(target.host, "localhost") }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0)
    }

    func testAFoldedLocationIsNotAnotherTarget() throws {
        try start(["/start": redirect("Location: \(foreign)\r\n \(allowed)\r\n"), "/ok": image, "/evil": image])
        let result = fetch("/start")
        guard case .failure(let error)? = result else { return XCTFail("a folded target was followed: \(String(describing: result))") }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0, "\(error)")
    }

    func testASchemeRelativeTargetIsCheckedAsLibcurlResolvesIt() throws {
        try start(["/start": redirect("Location: //localhost:\(port)/evil\r\n"), "/evil": image])
        assertRefusedToForeign("//host/path")
    }

    func testAnAllowedTargetIsFollowedAndEveryHopIsRecorded() throws {
        try start(["/start": redirect("Location: /middle\r\nCache-Control: max-age=5\r\n", status: "301 Moved Permanently"),
                   "/middle": redirect("Location: \(allowed)\r\n", status: "307 Temporary Redirect"), "/ok": image])
        guard case .success(let result)? = fetch("/start") else { return XCTFail("allowed chain") }
        XCTAssertEqual(result.body, Data("abc".utf8))
        XCTAssertEqual(result.response.url.path, "/ok")
        XCTAssertEqual(result.response.redirects.map(\.statusCode), [301, 307])
        XCTAssertEqual(result.response.redirects.map(\.url.path), ["/start", "/middle"])
        XCTAssertEqual(result.response.redirects.first?.value(forHeader: "Cache-Control"), "max-age=5")
        XCTAssertEqual(result.response.value(forHeader: "Content-Type"), "image/png", "the final response's own headers")
    }

    func testARedirectWithoutATargetIsTheOriginsFailure() throws {
        try start(["/none": redirect(""), "/empty": redirect("Location:\r\n"), "/spaces": redirect("Location:    \r\n")])
        for path in ["/none", "/empty", "/spaces"] {
            guard case .failure(.invalidRedirect(let status, let target))? = fetch(path, allowedHosts: []) else {
                XCTFail("\(path): a 3xx without a target must fail, not pass as the body"); continue
            }
            XCTAssertEqual(status, 302, path)
            XCTAssertNil(target, path)
            XCTAssertFalse(FetchError.invalidRedirect(status: status, target: target).isTransient)
        }
    }

    func testRedirectsToOtherSchemesAreRefused() throws {
        try start(["/ftp": redirect("Location: ftp://127.0.0.1/a.png\r\n"),
                   "/file": redirect("Location: file:///etc/passwd\r\n"),
                   "/js": redirect("Location: javascript:alert(1)\r\n")])
        guard case .failure(.redirectRefused(let target))? = fetch("/ftp", allowedHosts: []) else { return XCTFail("ftp") }
        XCTAssertEqual(target.scheme, "ftp")
        guard case .failure(.fileURLRefused)? = fetch("/file", allowedHosts: []) else { return XCTFail("file") }
        guard case .failure(.invalidRedirect)? = fetch("/js", allowedHosts: []) else { return XCTFail("javascript:") }
    }

    func testTheRedirectLimitIsExactAndCountsOurHops() throws {
        try start(["/r1": redirect("Location: /r2\r\n"), "/r2": redirect("Location: /r3\r\n"),
                   "/r3": redirect("Location: /ok\r\n"), "/ok": image, "/loop": redirect("Location: /loop\r\n")])
        guard case .success? = fetch("/r1", allowedHosts: [], configure: { $0.maximumRedirects = 3 }) else {
            return XCTFail("exactly at the limit")
        }
        guard case .failure(.tooManyRedirects(let limit))? = fetch("/r1", allowedHosts: [], configure: { $0.maximumRedirects = 2 }) else {
            return XCTFail("one past the limit")
        }
        XCTAssertEqual(limit, 2)
        guard case .failure(.tooManyRedirects)? = fetch("/loop", allowedHosts: []) else { return XCTFail("a loop") }
        XCTAssertEqual(origin.requestHeads(for: "/loop").count, 11, "the first request and 10 redirects")
    }

    func testCredentialsDoNotFollowARedirectToAnotherOrigin() throws {
        try start(["/same": redirect("Location: /ok\r\n"), "/away": redirect("Location: \(foreign)\r\n"),
                   "/ok": image, "/evil": image])
        let configure: (inout FetchRequest) -> Void = { request in
            request.credentials = .init(user: "user", password: "secret")
            request.headers["Authorization"] = "Bearer token"
            request.headers["Cookie"] = "session=1"
            request.headers["X-Trace"] = "kept"
        }
        guard case .success? = fetch("/same", allowedHosts: [], configure: configure) else { return XCTFail("same origin") }
        let sameOrigin = try XCTUnwrap(origin.requestHeads(for: "/ok").last)
        XCTAssertTrue(sameOrigin.contains("X-Trace: kept"))
        XCTAssertTrue(sameOrigin.contains("Cookie: session=1"), "same origin keeps its cookie")
        guard case .success? = fetch("/away", allowedHosts: [], configure: configure) else { return XCTFail("other origin") }
        let otherOrigin = try XCTUnwrap(origin.requestHeads(for: "/evil").last)
        XCTAssertFalse(otherOrigin.lowercased().contains("authorization"), otherOrigin)
        XCTAssertFalse(otherOrigin.contains("session=1"), otherOrigin)
        XCTAssertTrue(otherOrigin.contains("X-Trace: kept"))
    }

    func testARedirectBodyIsDroppedAndBounded() throws {
        let body = String(repeating: "x", count: 5_000)
        try start(["/big": "HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
                   "/ok": image])
        guard case .success(let result)? = fetch("/big", allowedHosts: []) else { return XCTFail("a redirect body is dropped") }
        XCTAssertEqual(result.body, Data("abc".utf8))
        let tooBig = fetch("/big", allowedHosts: [], configure: { $0.maximumResponseSize = 1_000 })
        guard case .failure(.responseTooLarge)? = tooBig else { return XCTFail("bounded: \(String(describing: tooBig))") }
    }

    func testTheRequestsOwnHostIsCheckedAsLibcurlReadsIt() throws {
        try start(["/ok": image])
        var request = FetchRequest(url: URL(string: "http://localhost:\(port)/ok")!, timeout: 5)
        request.sourcePolicy = SourcePolicy(isPublicOnly: false, allowedHosts: ["127.0.0.1"])
        guard case .failure(.hostRefused)? = fetchAndWait(request, on: queue).result else { return XCTFail("foreign host") }
        XCTAssertEqual(origin.requestHeads.count, 0, "nothing sent")
        XCTAssertEqual(CurlURL("http://LOCALHOST:\(port)/x")?.host, "localhost")
        XCTAssertEqual(CurlURL("http://[::1]/x")?.hostForPolicy, "::1")
        XCTAssertEqual(CurlURL("https://a.example/x")?.port, 443)
        XCTAssertNil(CurlURL("not a url"))
    }
}
