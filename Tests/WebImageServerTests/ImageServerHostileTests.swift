import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import WebImageSync
import XCTest

/// Adversarial tests of the error mapping (hostile origins, outputs no format or limit allows), the concurrency
/// slots, 304s and signatures, all through real HTTP.
final class ImageServerHostileTests: XCTestCase {
    /// Every hostile origin behaviour gets its status, `Cache-Control: no-store`, no `ETag`, and is never
    /// cached; with one concurrency slot, a good request after each error is still served (no slot leaked).
    func testHostileOriginsGetTheirStatusAndLeakNoSlot() async throws {
        let harness = try await ServerHarness { configuration in
            configuration.maxConcurrency = 1
            configuration.maximumSourceSize = 200_000
            configuration.sourceTimeout = 1
            configuration.decodeLimits = DecodeLimits(maxPixelsPerFrame: 1_000_000, maxTotalPixels: 2_000_000,
                                                      maxFrameCount: 10)
            configuration.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
        }
        let origin = harness.origin
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        let png = try TestImages.gradient(width: 40, height: 40, format: .png)
        origin.route("/ok.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        origin.route("/lie-long", .wrongContentLength(jpeg, declared: jpeg.count + 5_000))
        origin.route("/huge-declared", .hugeDeclaredLength(10_000_000_000))
        origin.route("/endless", .endlessRandom())
        origin.route("/gzip-bomb", .zeroBomb(decodedBytes: 1 << 30))
        origin.route("/drip", .drip(jpeg, chunk: 16, interval: 0.2))
        origin.route("/stall", HTTPTestResponse.bytes(jpeg).delayed(by: 3))
        origin.route("/reset", .reset(jpeg, after: 100))
        origin.route("/close-mid", .closeMidBody(jpeg, after: 100))
        origin.route("/to-metadata", .redirect(to: "http://169.254.169.254/latest/meta-data/"))
        origin.route("/to-loopback", .redirect(to: "http://127.0.0.2:\(origin.port)/ok.jpg"))
        origin.route("/to-ipv6-loopback", .redirect(to: "http://[::1]:\(origin.port)/ok.jpg"))
        origin.route("/to-file", .redirect(to: "file:///etc/passwd"))
        origin.route("/to-ftp", .redirect(to: "ftp://127.0.0.1:\(origin.port)/ok.jpg"))
        origin.route("/loop", .redirect(to: "/loop"))
        origin.route("/text", .bytes(Array("<html>not an image</html>".utf8), contentType: "text/html"))
        origin.route("/empty", .bytes([UInt8](), contentType: "image/jpeg"))
        origin.route("/png-bomb", .bytes(Array(try DecodeBombs.png(Data(png), width: 60_000, height: 60_000)), contentType: "image/png"))
        origin.route("/frames", .bytes(try TestImages.animatedGIF(frames: 12), contentType: "image/gif"))
        origin.route("/304", .status(304))
        origin.route("/410", .status(410))
        origin.route("/429", .status(429))
        origin.route("/503", .status(503))

        let cases: [(path: String, extra: [(String, String)], status: Int, note: String)] = [
            ("/lie-long", [], 502, "Content-Length longer than the body"),
            ("/huge-declared", [], 413, "a 10 GB Content-Length"),
            ("/endless", [], 413, "an endless body"),
            ("/gzip-bomb", [], 413, "1 GiB of zeros gzipped"),
            ("/drip", [], 504, "a body dripping past the timeout"),
            ("/stall", [], 504, "no answer within the timeout"),
            ("/reset", [], 502, "connection reset mid-body"),
            ("/close-mid", [], 502, "connection closed mid-body"),
            // An address the policy refuses is "origin unreachable", as a name that does not resolve is.
            ("/to-metadata", [], 502, "a redirect to the link-local metadata address"),
            ("/to-loopback", [], 502, "a redirect to a loopback address outside the allowed network"),
            ("/to-ipv6-loopback", [], 502, "a redirect to ::1"),
            ("/to-file", [], 403, "a redirect to a file URL"),
            ("/to-ftp", [], 403, "a redirect to another scheme: the source is refused, the request's options are fine"),
            ("/loop", [], 502, "a redirect loop"),
            ("/text", [], 415, "HTML"),
            ("/empty", [], 415, "an empty body"),
            ("/png-bomb", [("w", "100")], 422, "a 60000 × 60000 PNG"),
            ("/frames", [("anim", "1"), ("format", "gif")], 422, "12 frames over a 10-frame limit, kept"),
            ("/304", [], 502, "an unsolicited 304"),
            ("/410", [], 404, "gone"),
            ("/429", [], 502, "rate limited by the origin"),
            ("/503", [], 502, "origin unavailable"),
        ]
        for (index, (path, extra, status, note)) in cases.enumerated() {
            let pairs = [("url", harness.source(path))] + extra
            let reply = await harness.image(pairs)
            XCTAssertEqual(reply.status, status, "\(path): \(note) — \(String(decoding: reply.body, as: UTF8.self))")
            XCTAssertEqual(reply.header("Cache-Control"), "no-store", path)
            XCTAssertNil(reply.header("ETag"), path)
            XCTAssertNil(reply.header("Retry-After"), path)
            XCTAssertEqual(harness.service.runningCount, 0, "\(path): the slot is given back")
            // A good request after it is served: one slot, so a leaked one would make it 503.
            let good = await harness.image([("url", harness.source("/ok.jpg")), ("w", String(10 + index))])
            XCTAssertEqual(good.status, 200, "after \(path)")
            // The error was not stored as a result: the same request fails the same way, not from a result tier.
            let again = await harness.image(pairs)
            XCTAssertEqual(again.status, status, "\(path) again")
            XCTAssertNil(again.header("X-WebImage-Tier"), "\(path) again")
        }
        // The first frame of the frame bomb is fine.
        let first = await harness.image([("url", harness.source("/frames")), ("format", "gif")])
        XCTAssertEqual(try first.decoded().frameCount, 1)
        XCTAssertEqual(origin.requestCount(for: "/410"), 2, "a 404 is not cached")
        XCTAssertEqual(origin.requestCount(for: "/503"), 2, "a 502 is not cached")
        XCTAssertEqual(origin.requestCount(for: "/stall"), 2, "a 504 is not cached")
        await harness.stop()
    }

    /// A failure is not remembered: once the origin recovers (a 500, a stall, a truncated body, then the image),
    /// the same request gets the image.
    func testATransientOriginFailureIsNotRemembered() async throws {
        let harness = try await ServerHarness { $0.sourceTimeout = 1 }
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        let failures: [HTTPTestResponse] = [.status(500), HTTPTestResponse.bytes(jpeg).delayed(by: 3),
                                            .closeMidBody(jpeg, after: 100), .status(404)]
        let answered = Tally()
        harness.origin.route("/flaky.jpg") { _ in
            let index = answered.next()
            return index < failures.count ? failures[index] : .bytes(jpeg, contentType: "image/jpeg")
        }
        let pairs = [("url", harness.source("/flaky.jpg")), ("w", "32")]
        var statuses: [Int] = []
        for _ in 0...failures.count { statuses.append(await harness.image(pairs).status) }
        XCTAssertEqual(statuses, [502, 504, 502, 404, 200])
        let warm = await harness.image(pairs)
        XCTAssertEqual(warm.header("X-WebImage-Tier"), "result_memory")
        await harness.stop()
    }

    /// A client that hangs up while its result is being made does not keep the only slot forever.
    func testAClientThatHangsUpGivesItsSlotBack() async throws {
        let harness = try await ServerHarness { $0.maxConcurrency = 1 }
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        harness.origin.route("/slow.jpg", HTTPTestResponse.bytes(jpeg, contentType: "image/jpeg").delayed(by: 1))
        harness.origin.route("/fast.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let url = harness.imageURL([("url", harness.source("/slow.jpg")), ("w", "20")])
        do {
            let result = try await ServerHarness.client.fetch(FetchRequest(url: url, timeout: 0.2))
            XCTFail("the client should have timed out, got \(result.response.statusCode ?? 0)")
        } catch {
            if case .timedOut = error {} else { XCTFail("expected a client timeout, got \(error)") }
        }
        // The abandoned pipeline finishes on its own (the origin answers after 1 s); wait for it with a deadline.
        let deadline = ContinuousClock.now + .seconds(10)
        while harness.service.runningCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(harness.service.runningCount, 0)
        let after = await harness.image([("url", harness.source("/fast.jpg")), ("w", "20")])
        XCTAssertEqual(after.status, 200)
        // And the abandoned result was kept.
        let abandoned = await harness.get(url)
        XCTAssertEqual(abandoned.header("X-WebImage-Tier"), "result_memory")
        await harness.stop()
    }

    /// Requests that join a result being made take no slot: with one slot, 20 identical requests all get the
    /// image while a different one is refused.
    func testCoalescedWaitersTakeNoSlot() async throws {
        let harness = try await ServerHarness { $0.maxConcurrency = 1 }
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        harness.origin.route("/slow.jpg", HTTPTestResponse.bytes(jpeg, contentType: "image/jpeg").delayed(by: 1))
        let url = harness.imageURL([("url", harness.source("/slow.jpg")), ("w", "20")])
        let other = harness.imageURL([("url", harness.source("/slow.jpg")), ("w", "21")])
        let leader = Task { await ServerHarness.get(url, headers: ["X-Test-Request": "leader"]) }
        let deadline = ContinuousClock.now + .seconds(10)
        while harness.service.runningCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let refusedTask = Task { await ServerHarness.get(other) }
        let replies = await withTaskGroup(of: ServerHarness.Reply.self) { group in
            for index in 0..<20 { group.addTask { await ServerHarness.get(url, headers: ["X-Test-Request": "\(index)"]) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let refused = await refusedTask.value
        let first = await leader.value
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(replies.map(\.status), Array(repeating: 200, count: 20))
        XCTAssertEqual(Set(replies.map(\.body) + [first.body]).count, 1)
        XCTAssertEqual(refused.status, 503, "a different result while the only slot is taken")
        XCTAssertEqual(refused.header("Retry-After"), "1")
        XCTAssertEqual(harness.service.runningCount, 0)
        await harness.stop()
    }

    /// `If-None-Match`: a list, a weak tag and `*` give 304 for the same representation only; the tag of the
    /// other `format=auto` representation, of another size, or a truncated tag gives 200; `*` on an error is the
    /// error.
    func testIfNoneMatchNeverAnswers304ForOtherBytes() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 320, height: 240), contentType: "image/jpeg"))
        let pairs = [("url", harness.source("/photo.jpg")), ("w", "100")]
        let webp = await harness.image(pairs, headers: ["Accept": "image/webp"])
        let jpeg = await harness.image(pairs, headers: ["Accept": "image/*"])
        let wider = await harness.image([pairs[0], ("w", "101")], headers: ["Accept": "image/*"])
        let webpTag = try XCTUnwrap(webp.header("ETag")), jpegTag = try XCTUnwrap(jpeg.header("ETag"))
        let widerTag = try XCTUnwrap(wider.header("ETag"))
        XCTAssertEqual(Set([webpTag, jpegTag, widerTag]).count, 3)
        let cases: [(ifNoneMatch: String, status: Int)] = [
            (webpTag, 200), (widerTag, 200), ("\(webpTag), \(widerTag)", 200), ("W/\(webpTag)", 200),
            (String(jpegTag.dropLast(2)) + "\"", 200), (String(jpegTag.dropFirst().dropLast()), 200), ("\"\"", 200),
            (jpegTag, 304), ("W/\(jpegTag)", 304), ("\(webpTag),\(jpegTag)", 304), ("*", 304),
        ]
        for (ifNoneMatch, status) in cases {
            let reply = await harness.image(pairs, headers: ["Accept": "image/*", "If-None-Match": ifNoneMatch])
            XCTAssertEqual(reply.status, status, ifNoneMatch)
            if status == 304 { XCTAssertEqual(reply.header("ETag"), jpegTag) }
        }
        harness.origin.route("/gone", .status(404))
        let gone = await harness.image([("url", harness.source("/gone"))], headers: ["If-None-Match": "*"])
        XCTAssertEqual(gone.status, 404)
        await harness.stop()
    }

    /// The signature covers exactly what is executed: a second `url` or `w` beside the signed ones, a `+` for a
    /// signed space, a padded or truncated `sig`: never the signed image for another request.
    func testSignatureCoversWhatIsExecuted() async throws {
        let key = Array("another very secret key".utf8)
        let harness = try await ServerHarness { $0.signingKey = key; $0.allowsUnsigned = false }
        let red = try ImageServerKeyTests.flat(ImageServerKeyTests.red)
        harness.origin.route("/a.png", .bytes(red, contentType: "image/png"))
        harness.origin.route("/evil.png", .bytes(red, contentType: "image/png"))
        let signer = try URLSigner(key: key)
        let base = "http://127.0.0.1:\(harness.port)/image?"
        let signed = [("url", harness.source("/a.png")), ("w", "50")]
        let sig = signer.signature(of: signed)
        func status(_ query: String) async -> Int { await harness.get(URL(string: base + query)!).status }
        let url = QueryString.escape(harness.source("/a.png"))
        let evil = QueryString.escape(harness.source("/evil.png"))

        let ok = await status("url=\(url)&w=50&sig=\(sig)")
        XCTAssertEqual(ok, 200)
        let percentName = await status("%75rl=\(url)&%77=50&%73ig=\(sig)")
        XCTAssertEqual(percentName, 200, "names are compared decoded, as signed")
        for (query, note) in [
            ("url=\(url)&w=50&url=\(evil)&sig=\(sig)", "a second url"),
            ("url=\(evil)&url=\(url)&w=50&sig=\(sig)", "a second url first"),
            ("url=\(url)&w=50&w=4000&sig=\(sig)", "a second w"),
            ("url=\(url)&w=50&sig=\(sig)&sig=\(sig)", "sig twice"),
            ("url=\(url)&w=50&h=10&sig=\(sig)", "an extra option"),
            ("url=\(url)&w=050&sig=\(sig)", "another spelling of a signed value"),
            ("url=\(url)&w=50&sig=\(sig)0", "a longer sig"),
            ("url=\(url)&w=50&sig=\(sig.dropLast())", "a shorter sig"),
            ("url=\(url)&w=50&sig=%20\(sig)", "a padded sig"),
            ("url=\(url)&w=50&sig=", "an empty sig"),
            ("url=\(url)&w=50", "no sig"),
        ] {
            let got = await status(query)
            XCTAssertTrue([400, 403].contains(got), "\(note): \(got)")
        }
        // A space signed as a space: `%20` is it, a `+` is a plus (a different value).
        let spacedURL = harness.source("/a.png") + "?x=a b"
        let spacedSig = signer.signature(of: [("url", spacedURL)])
        let escapedSpace = QueryString.escape(spacedURL)
        let withPercent = await status("url=\(escapedSpace)&sig=\(spacedSig)")
        XCTAssertNotEqual(withPercent, 403, "the signed value")
        let withPlus = await status("url=\(escapedSpace.replacingOccurrences(of: "%20", with: "+"))&sig=\(spacedSig)")
        XCTAssertEqual(withPlus, 403)
        XCTAssertEqual(harness.origin.requestCount(for: "/evil.png"), 0, "the unsigned source was never fetched")
        await harness.stop()
    }

    /// The host allow-list holds on redirects too: an allowed host redirecting elsewhere (an open redirect) does
    /// not make the service load, cache and serve another host's image.
    func testTheAllowListHoldsOnRedirects() async throws {
        let harness = try await ServerHarness { $0.allowedHosts = ["127.0.0.1"] }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 20, height: 10), contentType: "image/jpeg"))
        harness.origin.route("/here", .redirect(to: "/photo.jpg"))
        harness.origin.route("/away", .redirect(to: "http://localhost:\(harness.origin.port)/photo.jpg"))
        let within = await harness.image([("url", harness.source("/here"))])
        XCTAssertEqual(within.status, 200, "a redirect within an allowed host")
        let away = await harness.image([("url", harness.source("/away")), ("w", "5")])
        XCTAssertEqual(away.status, 403, "a redirect to localhost, which is not on the list")
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 1, "the refused redirect was not followed")
        await harness.stop()
    }

    /// A refused source's answer says neither the address its name resolved to nor its class: otherwise anyone
    /// may ask the service to resolve internal names (`db.corp.internal` → `10.2.3.4`). See OriginOracleTests.
    func testARefusedSourceDoesNotRevealTheAddressItsNameResolvedTo() async throws {
        let harness = try await ServerHarness { $0.allowedNetworks = [] }
        // The client above drops error bodies: read this one over a plain socket.
        let query = "url=" + QueryString.escape("http://localhost:\(harness.origin.port)/photo.jpg")
        let response = try await Self.rawGET(port: harness.port, target: "/image?\(query)")
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 502"), response)
        let body = response.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        XCTAssertEqual(body, "origin unreachable\n")
        for address in ["127.0.0.1", "::1"] { XCTAssertFalse(body.contains(address), body) }
        XCTAssertEqual(harness.origin.totalRequestCount, 0)
        await harness.stop()
    }

    /// The whole response (head and body, as text) to `GET target` on 127.0.0.1:`port`, over a plain socket.
    static func rawGET(port: Int, target: String) async throws -> String {
        try await Task.detached { () throws -> String in
            let client = try RawClient(port: port, receiveTimeout: 30)
            guard client.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") else {
                throw POSIXError(.EIO)
            }
            return client.readAll()
        }.value
    }

    /// A `url` whose parts Foundation and libcurl might read differently (a NUL, a backslash, two `@`) is
    /// refused or fetched from the host the allow-list saw, never from another.
    func testTheAllowListSeesTheHostThatIsFetched() async throws {
        let harness = try await ServerHarness { $0.allowedHosts = ["allowed.invalid"] }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 20, height: 10), contentType: "image/jpeg"))
        let origin = "127.0.0.1:\(harness.origin.port)"
        for source in [
            "http://\(origin)/photo.jpg\u{0}@allowed.invalid/",
            "http://\(origin)\u{0}@allowed.invalid/photo.jpg",
            "http://\(origin)\\@allowed.invalid/photo.jpg",
            "http://\(origin)%00@allowed.invalid/photo.jpg",
            "http://x@\(origin)@allowed.invalid/photo.jpg",
            "http://allowed.invalid@\(origin)/photo.jpg",
            "http://\(origin)#@allowed.invalid/photo.jpg",
            "http://\(origin)?@allowed.invalid/photo.jpg",
            "http://\(origin)\t@allowed.invalid/photo.jpg",
        ] {
            let reply = await harness.image([("url", source)])
            XCTAssertNotEqual(reply.status, 200, source.debugDescription)
        }
        XCTAssertEqual(harness.origin.totalRequestCount, 0, "nothing reached the origin, which is not on the list")
        await harness.stop()
    }
}

/// A counter shared with an origin handler.
final class Tally: Sendable {
    private let count = Mutex(0)

    /// The count before this call.
    func next() -> Int { count.withLock { value -> Int in defer { value += 1 }; return value } }
}
