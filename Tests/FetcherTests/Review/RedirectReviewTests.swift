@testable import Fetcher
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review of the fetcher's own redirect following (`CURLOPT_FOLLOWLOCATION` 0, `Transfer+Redirect.swift`) and of
/// its header line reader, against a raw origin that writes exactly the bytes of each attack.
///
/// "127.0.0.1" is the allowed host and "localhost" the foreign one: both reach the same raw origin, which records
/// every request head, so a test sees whether a foreign path was ever asked for.
final class RedirectReviewTests: XCTestCase {
    private var origin: RawHTTPServer!
    private var other: RawHTTPServer?
    private var network: NetworkFixture!
    private var queue: FetchQueue! { network.queue }
    private var thread: NetworkThread { network.thread }
    private let image = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nabc"
    private let routes = Routes()

    /// The raw origin's answers by path, changed by each test.
    private final class Routes: Sendable {
        let table = Mutex<[String: [UInt8]]>([:])
    }

    override func setUpWithError() throws {
        let routes = self.routes
        origin = try RawHTTPServer { path, _ in
            routes.table.withLock { $0[path] } ?? Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8)
        }
        network = NetworkFixture()
    }

    override func tearDown() {
        network.tearDown(self)
        origin.shutdown()
        other?.shutdown()
    }

    private var port: Int { origin.port }

    private func serve(_ responses: [String: String]) {
        routes.table.withLock { table in for (path, text) in responses { table[path] = Array(text.utf8) } }
    }

    private func redirect(_ location: String, status: String = "302 Found", extra: String = "") -> String {
        "HTTP/1.1 \(status)\r\nLocation: \(location)\r\n\(extra)Content-Length: 0\r\n\r\n"
    }

    private func request(_ path: String, allowedHosts: [String] = ["127.0.0.1"], timeout: Double = 5) -> FetchRequest {
        var request = FetchRequest(url: origin.url(path), timeout: timeout)
        request.sourcePolicy = SourcePolicy(isPublicOnly: false, allowedHosts: allowedHosts)
        return request
    }

    // MARK: Trailers are not header fields (RFC 9110 §6.5.1)

    /// libcurl hands chunked trailers to the header callback after the body. They used to be appended to the
    /// head's fields, so a redirect's trailer `Cache-Control: max-age=31536000` became the hop's freshness (the
    /// cache keeps it a year) and a trailer could stand in for any header the head did not send.
    func testTrailersOfARedirectAreNotItsHeaderFields() throws {
        serve(["/start": "HTTP/1.1 302 Found\r\nLocation: /ok\r\nTransfer-Encoding: chunked\r\n\r\n"
                   + "5\r\nmoved\r\n0\r\nCache-Control: max-age=31536000\r\nX-Trailer: 1\r\n\r\n",
               "/ok": image])
        guard case .success(let result)? = fetchAndWait(request("/start"), on: queue).result else {
            return XCTFail("the redirect is followed")
        }
        let hop = try XCTUnwrap(result.response.redirects.first)
        XCTAssertEqual(hop.statusCode, 302)
        XCTAssertEqual(hop.value(forHeader: "Location"), "/ok", "the head's own fields are kept")
        XCTAssertNil(hop.value(forHeader: "Cache-Control"), "a trailer is not a header field: \(hop.headers)")
        XCTAssertNil(hop.value(forHeader: "X-Trailer"), "\(hop.headers)")
    }

    /// The same with an empty chunked body: the head is delivered at completion, after the trailers.
    func testTrailersOfAnEmptyBodyAreNotHeaderFields() throws {
        serve(["/empty": "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n"
                   + "0\r\nCache-Control: max-age=31536000\r\nContent-Type: text/html\r\n\r\n"])
        guard case .success(let result)? = fetchAndWait(request("/empty", allowedHosts: []), on: queue).result else {
            return XCTFail("an empty body is a success")
        }
        XCTAssertNil(result.response.value(forHeader: "Cache-Control"), "\(result.response.headers)")
        XCTAssertEqual(result.response.values(forHeader: "Content-Type"), ["image/png"], "\(result.response.headers)")
    }

    /// A 1xx head, even one with a `Location`, is not the redirect, and its fields do not join the 302's.
    func testInformationalHeadsBeforeARedirectAreNeitherTargetsNorFields() throws {
        serve(["/start": "HTTP/1.1 100 Continue\r\n\r\n"
                   + "HTTP/1.1 103 Early Hints\r\nLink: </evil>; rel=preload\r\nLocation: http://localhost:\(port)/evil\r\n\r\n"
                   + redirect("http://127.0.0.1:\(port)/ok"),
               "/ok": image, "/evil": image])
        guard case .success(let result)? = fetchAndWait(request("/start"), on: queue).result else {
            return XCTFail("the 302 after the 1xx heads is followed")
        }
        XCTAssertEqual(result.body, Data("abc".utf8))
        XCTAssertEqual(result.response.redirects.count, 1)
        XCTAssertNil(result.response.redirects.first?.value(forHeader: "Link"))
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0)
    }

    /// A 304 is never a redirect, whatever `Location` it carries.
    func testANotModifiedWithALocationIsNotFollowed() {
        serve(["/304": "HTTP/1.1 304 Not Modified\r\nLocation: http://localhost:\(port)/evil\r\n\r\n", "/evil": image])
        guard case .failure(.notModified)? = fetchAndWait(request("/304", allowedHosts: []), on: queue).result else {
            return XCTFail("a 304 completes as notModified")
        }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0)
    }

    // MARK: Differentials: a target libcurl reads one way must be checked the same way

    /// Every spelling of the foreign host that libcurl connects to is refused; spellings libcurl cannot parse
    /// fail as the origin's bad redirect. Nothing ever reaches the foreign path.
    func testEverySpellingOfAForeignHostIsRefused() {
        let long = "http://localhost:\(port)/evil?" + String(repeating: "a", count: 60_000)
        let locations = [
            "http://%6cocalhost:\(port)/evil",             // percent-encoded host
            "HTTP://LOCALHOST:\(port)/evil",               // uppercase scheme and host
            "http://127.0.0.1:\(port)@localhost:\(port)/evil", // the allowed host as userinfo
            "http://127.0.0.1%2elocalhost:\(port)/evil",   // an encoded dot
            "http://localhost.:\(port)/evil",              // trailing dot
            "//LOCALHOST:\(port)/evil",                    // scheme-relative
            "http:\\\\localhost:\(port)\\evil",            // backslashes
            "\\\\localhost:\(port)\\evil",
            "http://[::1%25lo]:\(port)/evil",              // IPv6 with a zone id
            "http://[::ffff:127.0.0.1]:\(port)/evil",      // the allowed address, spelled as IPv6
            "http://localhost:\(port)/evil\u{0}x",         // NUL
            "  http://localhost:\(port)/evil  ",           // surrounding spaces
            long,                                          // a very long target
        ]
        for (index, location) in locations.enumerated() {
            serve(["/d\(index)": redirect(location), "/evil": image])
            let result = fetchAndWait(request("/d\(index)"), on: queue).result
            if case .success? = result { XCTFail("\(location.prefix(80)): followed to a foreign host") }
        }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0, "the foreign path was never asked for")
    }

    /// Spellings of the allowed address that libcurl normalises to it are allowed: the check reads the URL as
    /// libcurl does, not as text.
    func testSpellingsLibcurlNormalisesToTheAllowedAddressAreFollowed() {
        for (index, location) in ["http://0x7f.1:\(port)/ok", "http://2130706433:\(port)/ok", "http://127.1:\(port)/ok"].enumerated() {
            serve(["/n\(index)": redirect(location), "/ok": image])
            guard case .success(let result)? = fetchAndWait(request("/n\(index)"), on: queue).result else {
                XCTFail("\(location): libcurl reads 127.0.0.1"); continue
            }
            XCTAssertEqual(result.body, Data("abc".utf8), location)
        }
    }

    /// A space in an absolute `Location` (servers that build it from a file name) was followed by libcurl when
    /// it followed redirects itself (`Curl_follow` percent-encodes it), and by browsers; libcurl's
    /// `CURLINFO_REDIRECT_URL` without following hands such a target back raw, and it failed as an invalid
    /// redirect. The target is read as libcurl's own following reads it, and checked in that form.
    func testATargetWithASpaceIsFollowedAsLibcurlWouldFollowIt() throws {
        serve(["/start": redirect("http://127.0.0.1:\(port)/my photo.png"),
               "/my%20photo.png": image,
               "/away": redirect("http://localhost:\(port)/evil x.png"),
               "/evil%20x.png": image])
        let result = fetchAndWait(request("/start"), on: queue).result
        guard case .success(let fetched)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(fetched.body, Data("abc".utf8))
        XCTAssertEqual(fetched.response.url.path, "/my photo.png")
        XCTAssertEqual(origin.requestHeads(for: "/my%20photo.png").count, 1)
        let away = fetchAndWait(request("/away"), on: queue).result
        guard case .failure(.redirectRefused(let target))? = away else { return XCTFail("\(String(describing: away))") }
        XCTAssertEqual(target.host, "localhost")
        XCTAssertEqual(origin.requestHeads(for: "/evil%20x.png").count, 0)
    }

    /// A target libcurl accepts but then cannot use is the origin's bad redirect, not the caller's bad URL.
    /// libcurl reaches an internationalised host by converting it to punycode with the process's locale (libidn2's
    /// `idn2_lookup_ul`); in the C locale of a process that never calls `setlocale` it fails with
    /// `CURLE_URL_MALFORMAT`, which was reported as `invalidURL(<the request's own URL>)` — the service's 400
    /// "url: invalid", blaming its client for where the origin sent it.
    func testATargetLibcurlCannotUseIsTheOriginsFailure() {
        serve(["/idn": redirect("http://bücher.example:\(port)/ok"), "/ok": image])
        var request = request("/idn", allowedHosts: [])
        request.resolveOverrides = ["xn--bcher-kva.example:\(port):127.0.0.1"]
        let result = fetchAndWait(request, on: queue).result
        switch result {
        case .success?: break // a UTF-8 locale: libcurl reaches it
        case .failure(.invalidRedirect(let status, let target))?:
            XCTAssertEqual(status, 302)
            XCTAssertEqual(target.map { $0.contains("example") }, true, target ?? "no target")
        default: XCTFail("the origin's failure, not the request's URL: \(String(describing: result))")
        }
        // Refused hosts stay refused whatever their spelling.
        var refused = self.request("/idn", allowedHosts: ["127.0.0.1", "xn--other-kva.example", "bucher.example"])
        refused.resolveOverrides = request.resolveOverrides
        guard case .failure(.redirectRefused)? = fetchAndWait(refused, on: queue).result else { return XCTFail("refused") }
    }

    // MARK: Credentials stay with their origin

    /// Same host, other port: another origin. Neither the credentials nor `Authorization`/`Cookie` go there;
    /// when it sends the client back to the request's own origin, they do again (as libcurl does when it follows
    /// redirects itself: it compares with the first host).
    func testCredentialsDoNotGoToAnotherPortAndComeBackWithTheirOrigin() throws {
        let back = "http://127.0.0.1:\(port)/ok"
        let second = try RawHTTPServer { path, _ in
            Array((path == "/bounce" ? "HTTP/1.1 302 Found\r\nLocation: \(back)\r\nContent-Length: 0\r\n\r\n"
                : "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n").utf8)
        }
        other = second
        serve(["/away": redirect("http://127.0.0.1:\(second.port)/bounce"), "/ok": image])
        var request = request("/away", allowedHosts: [])
        request.credentials = .init(user: "user", password: "secret")
        request.headers["Authorization"] = "Bearer token"
        request.headers["cookie"] = "session=1"
        guard case .success(let result)? = fetchAndWait(request, on: queue).result else { return XCTFail("the chain") }
        XCTAssertEqual(result.response.redirects.count, 2)
        let atOther = try XCTUnwrap(second.requestHeads(for: "/bounce").first)
        XCTAssertFalse(atOther.lowercased().contains("authorization"), atOther)
        XCTAssertFalse(atOther.contains("session=1"), atOther)
        let backHome = try XCTUnwrap(origin.requestHeads(for: "/ok").first)
        XCTAssertTrue(backHome.contains("session=1"), backHome)
    }

    /// Credentials written in the request URL's userinfo do not follow a redirect to another host either.
    func testUserinfoCredentialsDoNotFollowToAnotherHost() throws {
        serve(["/away": redirect("http://localhost:\(port)/evil"), "/evil": image])
        var request = FetchRequest(url: try XCTUnwrap(URL(string: "http://user:secret@127.0.0.1:\(port)/away")), timeout: 5)
        request.sourcePolicy = SourcePolicy(isPublicOnly: false)
        guard case .success? = fetchAndWait(request, on: queue).result else { return XCTFail("followed") }
        let first = try XCTUnwrap(origin.requestHeads(for: "/away").first)
        XCTAssertTrue(first.contains("Authorization: Basic"), "the URL's credentials go to its own host: \(first)")
        let foreign = try XCTUnwrap(origin.requestHeads(for: "/evil").first)
        XCTAssertFalse(foreign.lowercased().contains("authorization"), foreign)
    }

    /// A custom `Host` names the request's own host: libcurl, following redirects itself, drops it on a
    /// redirect to another host (`Curl_http_host`: "setting Host: in the redirected request is being out on thin
    /// ice"), and keeps it for the same host. The other host got the first one's name, so it served (or refused)
    /// the wrong virtual host.
    func testACustomHostHeaderDoesNotFollowToAnotherHost() throws {
        serve(["/away": redirect("http://localhost:\(port)/next"), "/next": image,
               "/same": redirect("http://127.0.0.1:\(port)/ok"), "/ok": image])
        var request = request("/away", allowedHosts: [])
        request.headers["Host"] = "images.example"
        guard case .success? = fetchAndWait(request, on: queue).result else { return XCTFail("followed") }
        let first = try XCTUnwrap(origin.requestHeads(for: "/away").first)
        XCTAssertTrue(first.contains("Host: images.example"), first)
        let next = try XCTUnwrap(origin.requestHeads(for: "/next").first)
        XCTAssertFalse(next.contains("images.example"), next)
        XCTAssertTrue(next.contains("Host: localhost:\(port)"), next)

        request.url = origin.url("/same")
        guard case .success? = fetchAndWait(request, on: queue).result else { return XCTFail("followed") }
        let same = try XCTUnwrap(origin.requestHeads(for: "/ok").first)
        XCTAssertTrue(same.contains("Host: images.example"), "the same host keeps it: \(same)")
    }

    // MARK: Bodies of redirects

    /// A gzip bomb as a redirect's body is counted decoded, and stops at the limit.
    func testAGzipBombRedirectBodyStopsAtTheLimit() throws {
        let bomb = try ZlibEncoding.gzip([UInt8](repeating: 0, count: 16 << 20))
        let head = "HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)\r\n\r\n"
        routes.table.withLock { $0["/bomb"] = Array(head.utf8) + bomb }
        serve(["/ok": image])
        var limited = request("/bomb", allowedHosts: [])
        limited.maximumResponseSize = 1 << 20
        let result = fetchAndWait(limited, on: queue).result
        guard case .failure(.responseTooLarge)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(origin.requestHeads(for: "/ok").count, 0)
    }

    /// A redirect's body is nobody's. One that drips — delimited by the connection's close, chunked, or
    /// declared larger than a redirect page — was read until the request's timeout before the redirect was
    /// followed (libcurl following itself stops reading at the head of a `Connection: close` redirect and moves
    /// on). Only a small declared body is read (to keep the connection); any other stops at the head.
    func testADrippingRedirectBodyIsNotWaitedFor() throws {
        let heads = [
            "/close": "HTTP/1.1 302 Found\r\nLocation: /ok\r\nConnection: close\r\n\r\n",
            "/chunked": "HTTP/1.1 302 Found\r\nLocation: /ok\r\nTransfer-Encoding: chunked\r\n\r\n",
            "/large": "HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 10000000\r\n\r\n",
        ]
        let drip = try RawHTTPServer(streaming: { path, _, send in
            guard let head = heads[path] else {
                _ = send(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8))
                return
            }
            guard send(Array(head.utf8)) else { return }
            let piece = Array((path == "/chunked" ? "1\r\nx\r\n" : "x").utf8)
            for _ in 0..<100 { // the origin drips a byte every 50 ms for 5 s
                usleep(50_000)
                guard send(piece) else { return }
            }
        })
        other = drip
        for path in heads.keys.sorted() {
            let result = fetchAndWait(FetchRequest(url: drip.url(path), timeout: 2), on: queue).result
            guard case .success(let fetched)? = result else { XCTFail("\(path): \(String(describing: result))"); continue }
            XCTAssertEqual(fetched.body, Data("abc".utf8), path)
            XCTAssertEqual(fetched.response.redirects.map(\.statusCode), [302], path)
        }
    }

    /// A redirect stopped at its head takes its target from libcurl's stored fields (`curl_easy_header`), not
    /// from `CURLINFO_REDIRECT_URL` (computed only on completion). Differential: for every attack on the
    /// `Location` lines, both readings pick the same target — a close-delimited body (stopped at the head) and
    /// an empty declared one (read to completion) end alike.
    func testARedirectStoppedAtItsHeadPicksTheTargetLibcurlWould() {
        let foreign = "http://localhost:\(port)/evil", allowed = "http://127.0.0.1:\(port)/ok"
        let attacks = [
            "Location : \(allowed)\r\nLocation: \(foreign)\r\n",
            "Location:\r\nLocation: \(foreign)\r\n",
            "Location:   \r\nLocation: \(allowed)\r\n",
            "location: \(foreign)\r\nLocation: \(allowed)\r\n",
            "Location: \(allowed)\r\nLocation: \(foreign)\r\n",
            "Location: //localhost:\(port)/evil\r\n",
            "Location: http://%6cocalhost:\(port)/evil\r\n",
            "Location: /ok\r\n",
            "Location:\t/ok \t\r\n",
            "Location: http://127.0.0.1:\(port)/my photo.png\r\n",
            "X-Location: \(foreign)\r\n",
            "Location: ftp://127.0.0.1/x\r\n",
            "Location: http://127.0.0.1:\(port)@localhost:\(port)/evil\r\n",
            "Location: \\\\localhost:\(port)\\evil\r\n",
            "Location: http://localhost:\(port)/evil \r\nLocation: \(allowed)\r\n",
            "Location: \(foreign)?" + String(repeating: "a", count: 20_000) + "\r\n",
            "Location: \(foreign)\r\n \(allowed)\r\n",
            "Location\u{1A} \(foreign)\r\nLocation: \(allowed)\r\n", // SUB | 0x20 is ':'
        ]
        serve(["/ok": image, "/evil": image, "/my%20photo.png": image])
        func summary(_ result: Result<FetchResult, FetchError>?) -> String {
            switch result {
            case .success(let fetched)?: return "followed to \(fetched.response.url.absoluteString)"
            case .failure(.redirectRefused(let url))?: return "refused \(url.absoluteString)"
            case .failure(let error)?: return "failed \(error)"
            case nil: return "no result"
            }
        }
        for (index, fields) in attacks.enumerated() {
            serve(["/read\(index)": "HTTP/1.1 302 Found\r\n\(fields)Content-Length: 0\r\n\r\n",
                   "/head\(index)": "HTTP/1.1 302 Found\r\n\(fields)Connection: close\r\n\r\nbody until the close"])
            let read = summary(fetchAndWait(request("/read\(index)"), on: queue).result)
            let head = summary(fetchAndWait(request("/head\(index)"), on: queue).result)
            XCTAssertEqual(head, read, "\(fields.debugDescription)")
        }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0, "the foreign path was never asked for")
    }

    /// The same differential on random `Location` line sets (seed printed on failure).
    func testRandomLocationLinesPickTheSameTargetEitherWay() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let names = ["Location:", "location:", "LOCATION:", "Location :", "Location", " Location:", "X-Location:", "Location:\t"]
        let values = ["http://127.0.0.1:\(port)/ok", "http://localhost:\(port)/evil", "", "   ", "/ok", "//localhost:\(port)/evil",
                      "/my photo.png", "\t/ok\t", "http://%6cocalhost:\(port)/evil", "HTTP://127.0.0.1:\(port)/ok"]
        serve(["/ok": image, "/evil": image, "/my%20photo.png": image])
        for iteration in 0..<40 {
            var fields = ""
            for _ in 0..<(1 + Int(random.next() % 3)) {
                fields += names[Int(random.next() % UInt64(names.count))] + " " + values[Int(random.next() % UInt64(values.count))] + "\r\n"
                if random.next() % 5 == 0 { fields += " " + values[Int(random.next() % UInt64(values.count))] + "\r\n" }
            }
            serve(["/r\(iteration)": "HTTP/1.1 302 Found\r\n\(fields)Content-Length: 0\r\n\r\n",
                   "/h\(iteration)": "HTTP/1.1 302 Found\r\n\(fields)Connection: close\r\n\r\nbody"])
            let read = fetchAndWait(request("/r\(iteration)"), on: queue).result
            let head = fetchAndWait(request("/h\(iteration)"), on: queue).result
            XCTAssertEqual(Self.summary(head), Self.summary(read), "seed \(seed): \(fields.debugDescription)")
        }
        XCTAssertEqual(origin.requestHeads(for: "/evil").count, 0, "seed \(seed)")
    }

    private static func summary(_ result: Result<FetchResult, FetchError>?) -> String {
        switch result {
        case .success(let fetched)?: return "followed to \(fetched.response.url.absoluteString)"
        case .failure(.redirectRefused(let url))?: return "refused \(url.absoluteString)"
        case .failure(.invalidRedirect(let status, let target))?: return "invalid \(status) \(target ?? "-")"
        case .failure(let error)?: return "failed \(error)"
        case nil: return "no result"
        }
    }

    // MARK: Time

    /// A chain of slow redirects ends at the request's timeout, counted from the start of the first hop: each
    /// hop gets only the time left, not a fresh timeout.
    func testASlowRedirectChainEndsAtTheRequestsTimeout() throws {
        let slow = try RawHTTPServer { path, _ in
            // The origin itself is slow: each hop answers after 400 ms.
            usleep(400_000)
            let next = (Int(path.dropFirst(2)) ?? 0) + 1
            return Array("HTTP/1.1 302 Found\r\nLocation: /s\(next)\r\nContent-Length: 0\r\n\r\n".utf8)
        }
        other = slow
        var request = FetchRequest(url: slow.url("/s0"), timeout: 1)
        request.maximumRedirects = 20
        let result = fetchAndWait(request, on: queue).result
        guard case .failure(.timedOut)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertLessThanOrEqual(slow.requestHeads.count, 3, "1 s holds at most three 400 ms hops")
    }

    // MARK: Cancellation and coalescing

    /// Cancelling while a redirect loop runs (the handle is detached and re-attached on every hop) completes
    /// once with `.cancelled` and leaves no transfer and no easy handle behind (checked in `tearDown`).
    func testCancellingDuringARedirectLoopLeavesNothingBehind() throws {
        let hops = Mutex(0)
        let reached = expectation(description: "a few hops")
        reached.assertForOverFulfill = false
        let loop = try RawHTTPServer { _, _ in
            if hops.withLock({ $0 += 1; return $0 }) == 5 { reached.fulfill() }
            return Array("HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n".utf8)
        }
        other = loop
        var request = FetchRequest(url: loop.url("/loop"), timeout: 30)
        request.maximumRedirects = 100_000
        let recorder = FetchRecorder(expectation(description: "completion"), thread: thread)
        let operation = recorder.start(request, on: queue)
        wait(for: [reached], timeout: 20)
        operation.cancel()
        wait(for: [recorder.done], timeout: 20)
        flush(thread)
        let events = recorder.snapshot
        XCTAssertEqual(events.completions.count, 1)
        guard case .failure(.cancelled)? = events.result else { return XCTFail("\(String(describing: events.result))") }
    }

    /// Two identical requests share one redirected transfer: one request per hop, both get the body and the hops.
    func testCoalescedCallersShareOneRedirectedTransfer() throws {
        let release = DispatchSemaphore(value: 0)
        let shared = try RawHTTPServer { path, _ in
            if path == "/start" {
                release.wait() // held until both callers are in
                return Array("HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n".utf8)
            }
            return Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)
        }
        other = shared
        let request = FetchRequest(url: shared.url("/start"), timeout: 10)
        let first = FetchRecorder(expectation(description: "first"), thread: thread)
        let second = FetchRecorder(expectation(description: "second"), thread: thread)
        first.start(request, on: queue)
        second.start(request, on: queue)
        flush(thread)
        release.signal()
        wait(for: [first.done, second.done], timeout: 20)
        flush(thread)
        for recorder in [first, second] {
            guard case .success(let result)? = recorder.snapshot.result else { return XCTFail("both succeed") }
            XCTAssertEqual(result.body, Data("abc".utf8))
            XCTAssertEqual(result.response.redirects.map(\.statusCode), [302])
        }
        XCTAssertEqual(shared.requestHeads(for: "/start").count, 1, "one transfer")
        XCTAssertEqual(shared.requestHeads(for: "/ok").count, 1)
    }

    /// One of two coalesced callers cancels while their shared transfer is on its redirect: it completes
    /// `.cancelled` at once, the other still gets the target's body.
    func testOneCoalescedCallerCancellingDuringARedirectLeavesTheOther() throws {
        let release = DispatchSemaphore(value: 0)
        let shared = try RawHTTPServer { path, _ in
            if path == "/start" {
                release.wait()
                return Array("HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n".utf8)
            }
            return Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)
        }
        other = shared
        let request = FetchRequest(url: shared.url("/start"), timeout: 10)
        let leaving = FetchRecorder(expectation(description: "leaving"), thread: thread)
        let staying = FetchRecorder(expectation(description: "staying"), thread: thread)
        let operation = leaving.start(request, on: queue)
        staying.start(request, on: queue)
        flush(thread)
        operation.cancel()
        wait(for: [leaving.done], timeout: 10)
        release.signal()
        wait(for: [staying.done], timeout: 20)
        flush(thread)
        guard case .failure(.cancelled)? = leaving.snapshot.result else { return XCTFail("\(String(describing: leaving.snapshot.result))") }
        guard case .success(let result)? = staying.snapshot.result else { return XCTFail("\(String(describing: staying.snapshot.result))") }
        XCTAssertEqual(result.body, Data("abc".utf8))
        XCTAssertEqual(leaving.snapshot.completions.count, 1)
        XCTAssertEqual(shared.requestHeads(for: "/start").count, 1)
    }

    // MARK: HTTP/2

    /// Over HTTP/2 (nginx, TLS): a chain of redirects is followed on the connection it started on, every hop
    /// HTTP/2 with its own head, and a redirect to a host not allowed is refused there too.
    func testRedirectsOverHTTP2() throws {
        let payload = Data((0..<50_000).map { UInt8($0 % 251) })
        let h2: HTTP2TestServer
        do {
            h2 = try HTTP2TestServer.start(files: ["a.bin": payload], locations: """
                location = /r1 { return 301 /r2; }
                location = /r2 { add_header Cache-Control "max-age=7"; return 302 https://127.0.0.1:$PORT$/a.bin; }
                location = /away { return 302 https://localhost:$PORT$/a.bin; }
                """)
        } catch let error as HTTP2TestServer.Unavailable {
            throw XCTSkip(error.description)
        }
        defer { h2.shutdown() }
        var request = FetchRequest(url: h2.url("/r1"), timeout: 20)
        request.allowsInvalidCertificates = true
        request.sourcePolicy = SourcePolicy(isPublicOnly: false, allowedHosts: ["127.0.0.1"])
        let events = fetchAndWait(request, on: queue)
        guard case .success(let result)? = events.result else { return XCTFail("\(String(describing: events.result))") }
        XCTAssertEqual(result.body, payload)
        XCTAssertEqual(result.response.httpVersion, "HTTP/2")
        XCTAssertEqual(result.response.redirects.map(\.statusCode), [301, 302])
        XCTAssertEqual(result.response.redirects.map(\.httpVersion), ["HTTP/2", "HTTP/2"])
        XCTAssertEqual(result.response.redirects.last?.value(forHeader: "Cache-Control"), "max-age=7")
        XCTAssertEqual(events.responses.count, 1, "only the final head is delivered")

        request.url = h2.url("/away")
        let away = fetchAndWait(request, on: queue).result
        guard case .failure(.redirectRefused(let target))? = away else { return XCTFail("\(String(describing: away))") }
        XCTAssertEqual(target.host, "localhost")
        let log = try h2.accessLog()
        XCTAssertEqual(log.map(\.path), ["/r1", "/r2", "/a.bin", "/away"])
        XCTAssertEqual(Set(log.prefix(3).map(\.connection)).count, 1, "the hops shared one connection: \(log)")
        XCTAssertEqual(Set(log.map(\.protocol)), ["HTTP/2.0"])
    }
}
