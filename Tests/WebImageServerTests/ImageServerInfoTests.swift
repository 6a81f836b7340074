import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// `GET /info` through real HTTP: the JSON report, its cache, its signature and its errors.
final class ImageServerInfoTests: XCTestCase {
    var harness: ServerHarness!
    var rotatedBytes = 0

    override func setUp() async throws {
        harness = try await ServerHarness()
        let upright = try TestImages.gradient(width: 400, height: 200)
        let rotated = TestImages.withEXIFOrientation(upright, orientation: 6)
        rotatedBytes = rotated.count
        harness.origin.route("/rotated.jpg", .bytes(rotated, contentType: "image/jpeg"))
        harness.origin.route("/alpha.png", .bytes(try TestImages.gradient(width: 300, height: 200, format: .png, alpha: true),
                                                  contentType: "image/png"))
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 3), contentType: "image/gif"))
        harness.origin.route("/page.html", .bytes(Array("<html>not an image</html>".utf8), contentType: "text/html"))
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    private func infoURL(_ pairs: [(String, String)]) -> URL {
        let query = pairs.map { "\(QueryString.escape($0.0))=\(QueryString.escape($0.1))" }.joined(separator: "&")
        return URL(string: "http://127.0.0.1:\(harness.port)/info?\(query)")!
    }

    private func report(_ path: String) async throws -> (ServerHarness.Reply, [String: Any]) {
        let reply = await harness.get(infoURL([("url", harness.source(path))]))
        XCTAssertEqual(reply.status, 200, String(decoding: reply.body, as: UTF8.self))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        return (reply, json)
    }

    func testReportOfARotatedJPEG() async throws {
        let (reply, json) = try await report("/rotated.jpg")
        XCTAssertEqual(reply.header("Content-Type"), "application/json")
        XCTAssertNotNil(reply.header("ETag"))
        XCTAssertEqual(json["format"] as? String, "jpeg")
        // As displayed: EXIF 6 turns the stored 400 × 200 upright.
        XCTAssertEqual(json["width"] as? Int, 200)
        XCTAssertEqual(json["height"] as? Int, 400)
        XCTAssertEqual(json["orientation"] as? Int, 6)
        XCTAssertEqual(json["frames"] as? Int, 1)
        XCTAssertEqual(json["duration"] as? Double, 0)
        XCTAssertEqual(json["has_alpha"] as? Bool, false)
        XCTAssertEqual(json["bytes"] as? Int, rotatedBytes)
        XCTAssertEqual(json["color_space"] as? String, "untagged")
        let colour = try XCTUnwrap(json["dominant_color"] as? String)
        XCTAssertNotNil(colour.range(of: "^#[0-9a-f]{6}$", options: .regularExpression), colour)
        let blurhash = try XCTUnwrap(json["blurhash"] as? String)
        XCTAssertEqual(blurhash.count, 28, "4 × 3 components")
        XCTAssertEqual(try BlurHash.decode(blurhash, width: 4, height: 4).width, 4)
        // The ThumbHash is of the displayed image: its placeholder is portrait.
        let thumbhash = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(json["thumbhash"] as? String)))
        let placeholder = try ThumbHash.decode(Array(thumbhash))
        XCTAssertLessThan(placeholder.width, placeholder.height)
    }

    func testAlphaAndAnimation() async throws {
        let (_, alpha) = try await report("/alpha.png")
        XCTAssertEqual(alpha["format"] as? String, "png")
        XCTAssertEqual(alpha["has_alpha"] as? Bool, true)
        XCTAssertEqual([alpha["width"] as? Int, alpha["height"] as? Int], [300, 200])
        let (_, gif) = try await report("/anim.gif")
        XCTAssertEqual(gif["format"] as? String, "gif")
        XCTAssertEqual(gif["frames"] as? Int, 3)
        XCTAssertEqual(try XCTUnwrap(gif["duration"] as? Double), 0.3, accuracy: 0.001)
    }

    func testReportsAreCachedAndShareTheSourceWithImages() async throws {
        let (first, body) = try await report("/rotated.jpg")
        XCTAssertEqual(first.header("X-WebImage-Tier"), "origin")
        let (second, again) = try await report("/rotated.jpg")
        XCTAssertEqual(second.header("X-WebImage-Tier"), "result_memory")
        XCTAssertEqual(second.body, first.body, "the same bytes from the cache")
        XCTAssertEqual(again["blurhash"] as? String, body["blurhash"] as? String)
        XCTAssertEqual(harness.service.statistics.decodes, 1, "one small decode, once")
        // A conditional request with the report's ETag: 304.
        let etag = try XCTUnwrap(first.header("ETag"))
        let notModified = await harness.get(infoURL([("url", harness.source("/rotated.jpg"))]), headers: ["If-None-Match": etag])
        XCTAssertEqual(notModified.status, 304)
        // The image of the same source is made from the originals' cache: no second transfer, and a different key.
        let image = await harness.image([("url", harness.source("/rotated.jpg")), ("w", "50")])
        XCTAssertEqual(image.status, 200)
        XCTAssertEqual(image.header("X-WebImage-Tier"), "original_disk")
        XCTAssertEqual(harness.origin.requestCount(for: "/rotated.jpg"), 1)
    }

    func testErrorsAreThoseOfImages() async throws {
        let notImage = await harness.get(infoURL([("url", harness.source("/page.html"))]))
        XCTAssertEqual(notImage.status, 415)
        let unknown = await harness.get(infoURL([("url", harness.source("/rotated.jpg")), ("w", "10")]))
        XCTAssertEqual(unknown.status, 400)
        let missing = await harness.get(infoURL([]))
        XCTAssertEqual(missing.status, 400)
        let twice = await harness.get(infoURL([("url", harness.source("/rotated.jpg")), ("url", harness.source("/alpha.png"))]))
        XCTAssertEqual(twice.status, 400)
        let file = await harness.get(infoURL([("url", "file:///etc/passwd")]))
        XCTAssertEqual(file.status, 403)
        XCTAssertEqual(harness.origin.requestCount(for: "/rotated.jpg"), 0, "refused requests never reach the origin")
    }

    func testSignedLikeImages() async throws {
        let key = Array("a very secret key".utf8)
        let signedHarness = try await ServerHarness { $0.signingKey = key; $0.allowsUnsigned = false }
        signedHarness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 200, height: 100), contentType: "image/jpeg"))
        let signer = try URLSigner(key: key)
        let pairs = [("url", signedHarness.source("/photo.jpg"))]
        let signed = await signedHarness.get(URL(string: "http://127.0.0.1:\(signedHarness.port)/info?\(signer.signedQuery(pairs))")!)
        XCTAssertEqual(signed.status, 200)
        let unsigned = await signedHarness.get(URL(string: "http://127.0.0.1:\(signedHarness.port)/info?url=\(QueryString.escape(pairs[0].1))")!)
        XCTAssertEqual(unsigned.status, 403)
        let wrong = await signedHarness.get(URL(string: "http://127.0.0.1:\(signedHarness.port)/info?\(signer.signedQuery([("url", signedHarness.source("/other.jpg"))]))&url=x")!)
        XCTAssertEqual(wrong.status, 403)
        XCTAssertEqual(signedHarness.origin.requestCount(for: "/photo.jpg"), 1)
        await signedHarness.stop()
    }
}
