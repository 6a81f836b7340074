import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Outputs past a limit or a format's capacity, through real HTTP: a 422 (or, for `format=auto`, a format that
/// holds them), never a 500, and never memory out of proportion to the output.
final class ImageServerOutputLimitTests: XCTestCase {
    /// An output wider or taller than the format can hold (WebP: 16,383) is a pixel-limit error when WebP was
    /// asked for, and `format=auto` falls back to a format that holds it rather than failing.
    func testAnOutputPastWebPsSideLimit() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/panorama.png", .bytes(try TestImages.gradient(width: 17_000, height: 2, format: .png),
                                                     contentType: "image/png"))
        let source = harness.source("/panorama.png")
        let explicit = await harness.image([("url", source), ("format", "webp")])
        XCTAssertEqual(explicit.status, 422, String(decoding: explicit.body, as: UTF8.self))
        XCTAssertEqual(explicit.header("Cache-Control"), "no-store")
        let auto = await harness.image([("url", source)], headers: ["Accept": "image/webp,*/*"])
        XCTAssertEqual(auto.status, 200, String(decoding: auto.body, as: UTF8.self))
        XCTAssertNotEqual(auto.header("Content-Type"), "image/webp")
        XCTAssertEqual(auto.header("Vary"), "Accept")
        let image = try auto.decoded()
        XCTAssertEqual([image.width, image.height], [17_000, 2])
        // Within the limit, WebP it is.
        let small = await harness.image([("url", source), ("h", "1")], headers: ["Accept": "image/webp,*/*"])
        XCTAssertEqual(small.header("Content-Type"), "image/webp")
        XCTAssertEqual(try [small.decoded().width, small.decoded().height], [8_500, 1])
        await harness.stop()
    }

    /// `anim=1` with a large output: every frame is made at the output size, so the output animation is held to
    /// the animation pixel limit (`decodeLimits.maxTotalPixels`), like the source: 422, not gigabytes of frames.
    func testAnAnimatedOutputPastTheAnimationPixelLimit() async throws {
        let harness = try await ServerHarness { $0.decodeLimits = DecodeLimits(maxTotalPixels: 2_000_000) }
        // 20 frames of 60 × 40: 48,000 source pixels.
        harness.origin.route("/anim.gif", .bytes(try TestImages.animatedGIF(frames: 20), contentType: "image/gif"))
        let source = harness.source("/anim.gif")
        // 600 × 400 × 20 frames = 4.8 Mpx of output, over the 2 Mpx limit.
        for format in ["gif", "webp"] {
            let reply = await harness.image([("url", source), ("anim", "1"), ("format", format), ("w", "600")])
            XCTAssertEqual(reply.status, 422, "\(format): \(String(decoding: reply.body, as: UTF8.self))")
            XCTAssertEqual(reply.header("Cache-Control"), "no-store")
        }
        let auto = await harness.image([("url", source), ("anim", "1"), ("w", "600")], headers: ["Accept": "image/*"])
        XCTAssertEqual(auto.status, 422, "auto keeps the animation as GIF")
        // The first frame alone is fine, and so is an animation within the limit (240 × 160 × 20 = 768 kpx).
        let still = await harness.image([("url", source), ("format", "gif"), ("w", "600")])
        XCTAssertEqual(try still.decoded().frameCount, 1)
        let small = await harness.image([("url", source), ("anim", "1"), ("format", "gif"), ("w", "240")])
        let image = try small.decoded()
        XCTAssertEqual([image.width, image.height, image.frameCount], [240, 160, 20])
        await harness.stop()
    }

    /// A `cover` of an extreme aspect ratio (a 1000 × 1 source into a 1 × 512 box scales it by 512) must not
    /// make the whole scaled image (512,000 × 512: 1 GiB of RGBA) to crop 512 pixels out of it.
    func testACoverCropNeverMakesTheWholeScaledImage() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/line.png", .bytes(try TestImages.gradient(width: 1000, height: 1, format: .png),
                                                 contentType: "image/png"))
        // Peak RSS of this process (the server runs in it), reset first (Linux: `echo 5 > /proc/self/clear_refs`).
        func kilobytes(_ field: String) throws -> Int {
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
            return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }
        let clear = try XCTUnwrap(FileHandle(forWritingAtPath: "/proc/self/clear_refs"))
        try clear.write(contentsOf: Data("5".utf8))
        try clear.close()
        let before = try kilobytes("VmRSS")
        let reply = await harness.image([("url", harness.source("/line.png")), ("w", "1"), ("h", "512"), ("format", "png")])
        let peak = try kilobytes("VmHWM")
        let image = try reply.decoded()
        XCTAssertEqual([image.width, image.height], [1, 512])
        XCTAssertLessThan(peak - before, 256 << 10, "peak RSS rose by \(peak - before) KB for a 1 × 512 output")
        await harness.stop()
    }
}
