import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Every option through real HTTP: the response is decoded and its size, format and frames checked.
final class ImageServerOptionsTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
        harness.origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 800, height: 600), contentType: "image/jpeg"))
        harness.origin.route("/alpha.png", .bytes(try TestImages.gradient(width: 300, height: 200, format: .png, alpha: true),
                                                  contentType: "image/png"))
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 3), contentType: "image/gif"))
        let upright = try TestImages.gradient(width: 400, height: 200)
        harness.origin.route("/rotated.jpg", .bytes(TestImages.withEXIFOrientation(upright, orientation: 6),
                                                    contentType: "image/jpeg"))
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    private func photo(_ extra: [(String, String)]) async throws -> (ServerHarness.Reply, Image) {
        let reply = await harness.image([("url", harness.source("/photo.jpg"))] + extra)
        return (reply, try reply.decoded())
    }

    func testCoverCropsToExactlyTheBox() async throws {
        let (reply, image) = try await photo([("w", "400"), ("h", "300"), ("fit", "cover"), ("format", "jpeg")])
        XCTAssertEqual([image.width, image.height], [400, 300])
        XCTAssertEqual(image.format, .jpeg)
        XCTAssertEqual(reply.header("Content-Type"), "image/jpeg")
        XCTAssertEqual(reply.header("Content-Length"), String(reply.body.count))
        // Cover is the default fit, and a tall box crops the sides.
        let (_, tall) = try await photo([("w", "100"), ("h", "300"), ("format", "png")])
        XCTAssertEqual([tall.width, tall.height], [100, 300])
        // The crop keeps the centre: the red channel (x gradient) at the middle is about half.
        let middle = tall.firstFrame.buffer.pixel(x: 50, y: 150)
        XCTAssertEqual(Double(middle.r), 127, accuracy: 12, "\(middle)")
    }

    func testContainFitsInsideKeepingTheAspectRatio() async throws {
        let (_, image) = try await photo([("w", "400"), ("h", "400"), ("fit", "contain")])
        XCTAssertEqual([image.width, image.height], [400, 300])
        let (_, narrow) = try await photo([("w", "200"), ("h", "50"), ("fit", "contain")])
        XCTAssertEqual([narrow.width, narrow.height], [67, 50])
    }

    func testFillStretches() async throws {
        let (_, image) = try await photo([("w", "123"), ("h", "45"), ("fit", "fill")])
        XCTAssertEqual([image.width, image.height], [123, 45])
    }

    func testOneSideKeepsTheAspectRatioAndNoneKeepsTheSize() async throws {
        let (_, byWidth) = try await photo([("w", "200")])
        XCTAssertEqual([byWidth.width, byWidth.height], [200, 150])
        let (_, byHeight) = try await photo([("h", "60")])
        XCTAssertEqual([byHeight.width, byHeight.height], [80, 60])
        let (_, original) = try await photo([("format", "png")])
        XCTAssertEqual([original.width, original.height], [800, 600])
        // Upscaling when asked for.
        let (_, larger) = try await photo([("w", "1000")])
        XCTAssertEqual([larger.width, larger.height], [1000, 750])
    }

    func testEveryFormat() async throws {
        for (name, format, type) in [("jpeg", ImageFormat.jpeg, "image/jpeg"), ("png", .png, "image/png"),
                                     ("webp", .webp, "image/webp"), ("gif", .gif, "image/gif")] {
            let (reply, image) = try await photo([("w", "64"), ("h", "48"), ("format", name)])
            XCTAssertEqual(image.format, format, name)
            XCTAssertEqual(reply.header("Content-Type"), type, name)
            XCTAssertEqual([image.width, image.height], [64, 48], name)
            XCTAssertNil(reply.header("Vary"), "only format=auto varies (\(name))")
        }
    }

    func testQualityChangesTheBytes() async throws {
        let (low, _) = try await photo([("w", "400"), ("format", "jpeg"), ("q", "10")])
        let (high, _) = try await photo([("w", "400"), ("format", "jpeg"), ("q", "95")])
        XCTAssertLessThan(low.body.count * 2, high.body.count, "q=10 \(low.body.count) B, q=95 \(high.body.count) B")
        let (lowWebP, _) = try await photo([("w", "400"), ("format", "webp"), ("q", "10")])
        let (highWebP, _) = try await photo([("w", "400"), ("format", "webp"), ("q", "95")])
        XCTAssertLessThan(lowWebP.body.count, highWebP.body.count)
    }

    func testAnimationKeptOnlyWithAnimAndAnAnimatedFormat() async throws {
        let source = harness.source("/anim.gif")
        let gif = try await harness.image([("url", source), ("format", "gif"), ("anim", "1"), ("w", "30")]).decoded()
        XCTAssertEqual(gif.frameCount, 3)
        XCTAssertEqual([gif.width, gif.height], [30, 20])
        XCTAssertEqual(gif.duration(at: 1), 0.1, accuracy: 0.011)
        let webp = try await harness.image([("url", source), ("format", "webp"), ("anim", "1")]).decoded()
        XCTAssertEqual(webp.format, .webp)
        XCTAssertEqual(webp.frameCount, 3)
        let first = try await harness.image([("url", source), ("format", "gif")]).decoded()
        XCTAssertEqual(first.frameCount, 1, "anim=0: the first frame")
        let png = try await harness.image([("url", source), ("format", "png"), ("anim", "1")]).decoded()
        XCTAssertEqual(png.frameCount, 1, "PNG output does not animate here")
        // format=auto without WebP in Accept keeps an animation as GIF.
        let auto = await harness.image([("url", source), ("anim", "1")], headers: ["Accept": "image/*"])
        XCTAssertEqual(auto.header("Content-Type"), "image/gif")
        XCTAssertEqual(try auto.decoded().frameCount, 3)
    }

    func testBlurSmoothsThePixels() async throws {
        // The blue channel of the source is a sawtooth ((x + y) % 256): sharp edges that a blur spreads.
        func steepestStep(_ image: Image) -> Int {
            let buffer = image.firstFrame.buffer
            var steepest = 0
            for y in 0..<buffer.height { for x in 1..<buffer.width {
                steepest = max(steepest, abs(Int(buffer.pixel(x: x, y: y).b) - Int(buffer.pixel(x: x - 1, y: y).b)))
            } }
            return steepest
        }
        let (_, sharp) = try await photo([("w", "200"), ("format", "png")])
        let (_, blurred) = try await photo([("w", "200"), ("format", "png"), ("blur", "4")])
        XCTAssertEqual([blurred.width, blurred.height], [200, 150])
        XCTAssertGreaterThan(steepestStep(sharp), 100)
        XCTAssertLessThan(steepestStep(blurred), steepestStep(sharp) / 3)
    }

    func testEXIFOrientationIsApplied() async throws {
        // Stored 400 × 200 with orientation 6 (rotate 90° clockwise): displayed 200 × 400.
        let image = try await harness.image([("url", harness.source("/rotated.jpg")), ("w", "100"), ("format", "png")]).decoded()
        XCTAssertEqual([image.width, image.height], [100, 200])
        XCTAssertEqual(image.orientation, .up, "the output carries no orientation to apply again")
    }

    func testAutoNegotiatesFromAccept() async throws {
        let photo = harness.source("/photo.jpg")
        let webp = await harness.image([("url", photo), ("w", "100")], headers: ["Accept": "image/webp,*/*"])
        XCTAssertEqual(webp.header("Content-Type"), "image/webp")
        XCTAssertEqual(webp.header("Vary"), "Accept")
        XCTAssertEqual(try webp.decoded().format, .webp)
        let jpeg = await harness.image([("url", photo), ("w", "100")], headers: ["Accept": "image/*,*/*;q=0.8"])
        XCTAssertEqual(jpeg.header("Content-Type"), "image/jpeg")
        XCTAssertEqual(jpeg.header("Vary"), "Accept")
        let refused = await harness.image([("url", photo), ("w", "100")], headers: ["Accept": "image/webp;q=0, image/*"])
        XCTAssertEqual(refused.header("Content-Type"), "image/jpeg")
        let alpha = await harness.image([("url", harness.source("/alpha.png")), ("w", "100")], headers: ["Accept": "image/*"])
        XCTAssertEqual(alpha.header("Content-Type"), "image/png")
        let decoded = try alpha.decoded()
        XCTAssertTrue(decoded.hasAlpha)
        XCTAssertLessThan(decoded.firstFrame.buffer.pixel(x: 0, y: 30).a, 128)
    }

    func testETagAnd304AndAWarmRequestNeitherFetchesNorDecodes() async throws {
        let pairs = [("url", harness.source("/photo.jpg")), ("w", "160"), ("h", "120"), ("format", "webp")]
        let first = await harness.image(pairs)
        XCTAssertEqual(first.status, 200)
        let etag = try XCTUnwrap(first.header("ETag"))
        XCTAssertTrue(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"), etag)
        XCTAssertEqual(first.header("Cache-Control"), "public, max-age=86400")
        let before = harness.service.statistics
        let warm = await harness.image(pairs)
        XCTAssertEqual(warm.body, first.body)
        XCTAssertEqual(warm.header("ETag"), etag)
        XCTAssertEqual(warm.header("X-WebImage-Tier"), "result_memory")
        let revalidated = await harness.image(pairs, headers: ["If-None-Match": "\"other\", \(etag)"])
        XCTAssertEqual(revalidated.status, 304)
        XCTAssertEqual(revalidated.header("ETag"), etag)
        let changed = await harness.image(pairs, headers: ["If-None-Match": "\"other\""])
        XCTAssertEqual(changed.status, 200)
        let after = harness.service.statistics
        XCTAssertEqual(after, before, "warm requests fetch, decode and encode nothing")
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 1)
    }
}
