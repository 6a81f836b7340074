import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Every error status through real HTTP, and the sources the default policy refuses.
final class ImageServerErrorTests: XCTestCase {
    func testEveryErrorStatus() async throws {
        let harness = try await ServerHarness { configuration in
            configuration.maximumSourceSize = 200_000
            configuration.sourceTimeout = 1
            configuration.decodeLimits = DecodeLimits(maxPixelsPerFrame: 200_000)
            configuration.maximumOutputPixels = 1_000_000
        }
        let origin = harness.origin
        origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 200, height: 100), contentType: "image/jpeg"))
        origin.route("/large.png", .bytes(try TestImages.gradient(width: 1200, height: 1000, format: .png),
                                          contentType: "image/png"))
        origin.route("/big", .bytes([UInt8](repeating: 7, count: 300_000)))
        origin.route("/text", .bytes(Array("hello, not an image".utf8), contentType: "text/plain"))
        origin.route("/gone", .status(404))
        origin.route("/broken", .status(500))
        origin.route("/slow", HTTPTestResponse.bytes(try TestImages.gradient(width: 10, height: 10)).delayed(by: 3))
        let photo = harness.source("/photo.jpg")
        let refused = try HTTPTestServer.refusedURL("/x.jpg").absoluteString

        let cases: [(pairs: [(String, String)], status: Int, note: String)] = [
            ([("w", "10")], 400, "no url"),
            ([("url", "not a url")], 400, "url not absolute"),
            ([("url", photo), ("w", "0")], 400, "w = 0"),
            ([("url", photo), ("w", "9000")], 400, "w over 8192"),
            ([("url", photo), ("h", "ten")], 400, "h not a number"),
            ([("url", photo), ("fit", "stretch")], 400, "unknown fit"),
            ([("url", photo), ("format", "bmp")], 400, "unknown format"),
            ([("url", photo), ("q", "101")], 400, "q over 100"),
            ([("url", photo), ("anim", "2")], 400, "anim not 0/1"),
            ([("url", photo), ("blur", "-1")], 400, "negative blur"),
            ([("url", photo), ("zoom", "2")], 400, "unknown option"),
            ([("url", photo), ("w", "1"), ("w", "2")], 400, "repeated option"),
            ([("url", photo), ("sig", "00")], 403, "a wrong signature is refused even when unsigned is allowed"),
            ([("url", "ftp://example.com/a.jpg")], 403, "not http(s)"),
            ([("url", harness.source("/gone"))], 404, "origin 404"),
            ([("url", harness.source("/big"))], 413, "over the response-size limit"),
            ([("url", harness.source("/text"))], 415, "not an image"),
            ([("url", harness.source("/large.png")), ("w", "100")], 422, "source over the decode limit, even downsampled (over 4 × the limit)"),
            ([("url", photo), ("w", "2000"), ("h", "1000")], 422, "output over the maximum output size"),
            ([("url", harness.source("/broken"))], 502, "origin 500"),
            ([("url", refused)], 502, "connection refused"),
            ([("url", harness.source("/slow"))], 504, "origin timeout"),
        ]
        for (pairs, status, note) in cases {
            let reply = await harness.image(pairs)
            XCTAssertEqual(reply.status, status, note)
            XCTAssertEqual(reply.header("Cache-Control"), "no-store", note)
        }
        // Errors are not cached: the origin is asked again.
        _ = await harness.image([("url", harness.source("/gone"))])
        XCTAssertEqual(origin.requestCount(for: "/gone"), 2)
        await harness.stop()
    }

    func testSignatures() async throws {
        let key = Array("a very secret key".utf8)
        let harness = try await ServerHarness { $0.signingKey = key; $0.allowsUnsigned = false }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 200, height: 100), contentType: "image/jpeg"))
        let signer = try URLSigner(key: key)
        let pairs = [("url", harness.source("/photo.jpg")), ("w", "50"), ("format", "png")]
        let signed = URL(string: "http://127.0.0.1:\(harness.port)/image?\(signer.signedQuery(pairs))")!
        let accepted = await harness.get(signed)
        XCTAssertEqual(try accepted.decoded().width, 50)
        // The order of the parameters does not matter, the canonical query does.
        let reordered = harness.imageURL([pairs[2], pairs[1], pairs[0], ("sig", signer.signature(of: pairs))])
        do { let status = await harness.get(reordered).status; XCTAssertEqual(status, 200) }
        // Uppercase hex is the same signature.
        let upper = harness.imageURL(pairs + [("sig", signer.signature(of: pairs).uppercased())])
        do { let status = await harness.get(upper).status; XCTAssertEqual(status, 200) }
        // A changed option, another key, or no signature: 403.
        let tampered = harness.imageURL([pairs[0], ("w", "51"), pairs[2], ("sig", signer.signature(of: pairs))])
        do { let status = await harness.get(tampered).status; XCTAssertEqual(status, 403) }
        let otherKey = harness.imageURL(pairs + [("sig", try URLSigner(key: Array("another key, 16+ bytes".utf8)).signature(of: pairs))])
        do { let status = await harness.get(otherKey).status; XCTAssertEqual(status, 403) }
        do { let status = await harness.image(pairs).status; XCTAssertEqual(status, 403, "unsigned") }
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 1, "refused requests never reach the origin")
        await harness.stop()
    }

    func testKnownSignatureVector() throws {
        // HMAC-SHA256("a key of 16 bytes or more", "url=https%3A%2F%2Fa.example%2Fx.jpg&w=400"), computed
        // independently with openssl (a key under 16 bytes is refused):
        // printf '%s' 'url=https%3A%2F%2Fa.example%2Fx.jpg&w=400' | openssl dgst -sha256 -hmac 'a key of 16 bytes or more'
        let pairs = [("w", "400"), ("url", "https://a.example/x.jpg")]
        XCTAssertEqual(QueryString.canonical(pairs), "url=https%3A%2F%2Fa.example%2Fx.jpg&w=400")
        XCTAssertEqual(try URLSigner(key: Array("a key of 16 bytes or more".utf8)).signature(of: pairs), Self.opensslVector)
    }

    static let opensslVector = "c612b98d826ad6148312fa76f3fb892125aa90b0cc0a8c9d876910885c5bde23"

    func testHostAllowList() async throws {
        let harness = try await ServerHarness { $0.allowedHosts = ["images.example.com", "*.cdn.example.com"] }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 20, height: 10), contentType: "image/jpeg"))
        let reply = await harness.image([("url", harness.source("/photo.jpg"))])
        XCTAssertEqual(reply.status, 403, "127.0.0.1 is not on the host allow-list")
        XCTAssertEqual(harness.origin.totalRequestCount, 0)
        await harness.stop()
    }

    /// The default policy (no allowed networks) refuses loopback, link-local and `file:` before any byte is sent:
    /// a refused address is "origin unreachable" (502, as a name that does not resolve), `file:` a refused source.
    func testDefaultPolicyRefusesPrivateSources() async throws {
        let harness = try await ServerHarness { $0.allowedNetworks = [] }
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 20, height: 10), contentType: "image/jpeg"))
        for (source, status) in [(harness.source("/photo.jpg"), 502), ("http://localhost:\(harness.origin.port)/photo.jpg", 502),
                                 ("http://[::1]:\(harness.origin.port)/photo.jpg", 502), ("http://169.254.169.254/latest/meta-data/", 502),
                                 ("http://0.0.0.0:\(harness.origin.port)/photo.jpg", 502), ("file:///etc/passwd", 403)] {
            let reply = await harness.image([("url", source)])
            XCTAssertEqual(reply.status, status, source)
        }
        XCTAssertEqual(harness.origin.totalRequestCount, 0, "no request reached the loopback origin")
        await harness.stop()
    }
}
