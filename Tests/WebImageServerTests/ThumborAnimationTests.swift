import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Animated GIFs through thumbor URLs stay animated, as thumbor 7.8's PIL engine keeps them (`ALLOW_ANIMATED_GIFS`,
/// on by default: trim, crop boxes, sizes, flips and `fit-in` apply to every frame; checked against thumbor 7.8 on
/// the corpus's animated GIFs). Other animated sources give their first frame, as thumbor's.
final class ThumborAnimationTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// Frame `i` of the source: a white 40 × 30 with a 20 × 10 block at (5, 5) on frame 0 only and a colour of its own
    /// on every frame at (30, 20)…(35, 25), so that each output frame shows which source frame it came from.
    private static func frame(_ i: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: 40, height: 30, pixelFormat: .rgba8)
        let mark = RGBA(r: UInt8(60 * i), g: 200, b: UInt8(255 - 60 * i))
        for y in 0..<30 {
            for x in 0..<40 {
                let inBlock = i == 0 && (5..<25).contains(x) && (5..<15).contains(y)
                let inMark = (30..<36).contains(x) && (20..<26).contains(y)
                buffer.setPixel(x: x, y: y, to: inBlock ? RGBA(r: 200, g: 0, b: 0) : inMark ? mark : RGBA(r: 255, g: 255, b: 255))
            }
        }
        return buffer
    }

    private func serve(_ name: String, format: ImageFormat, contentType: String) throws {
        var encoder = ImageEncoder(format: format)
        for i in 0..<3 { encoder.addFrame(try Self.frame(i), duration: 0.1 * Double(i + 1)) }
        harness.origin.route("/\(name)", .bytes(Array(try encoder.encode()), contentType: contentType))
    }

    private func get(_ part: String, _ name: String) async throws -> Image {
        let origin = "127.0.0.1:\(harness.origin.url("/").port!)"
        let reply = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/unsafe/\(part)/\(origin)/\(name)")!)
        XCTAssertEqual(reply.status, 200, "\(part): \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
        return try reply.decoded()
    }

    func testGeometryKeepsEveryFrameOfAGIF() async throws {
        try serve("anim.gif", format: .gif, contentType: "image/gif")
        for (part, size) in [("20x15", [20, 15]), ("-20x-15", [20, 15]), ("fit-in/20x20", [20, 15]),
                             ("10x10:36x26/0x0", [26, 16]), ("20x20/smart", [20, 20])] {
            let image = try await get(part, "anim.gif")
            XCTAssertEqual(image.format, .gif, part)
            XCTAssertEqual(image.frameCount, 3, "\(part): thumbor keeps every frame of a GIF")
            XCTAssertEqual([image.width, image.height], size, part)
        }
        // The durations stay (thumbor 7.8's PIL path divides them by 1000 by mistake; ours keep the source's).
        let kept = try await get("20x15", "anim.gif")
        XCTAssertEqual((0..<kept.frameCount).map { (kept.duration(at: $0) * 100).rounded() }, [10, 20, 30])
    }

    func testTrimOnTheFirstFrameCutsEveryFrameThroughTheSameBox() async throws {
        try serve("anim.gif", format: .gif, contentType: "image/gif")
        // thumbor finds the box on the first frame (the block and the mark: (5, 5)…(36, 26)) and crops every frame
        // to it.
        let image = try await get("trim", "anim.gif")
        XCTAssertEqual(image.frameCount, 3)
        XCTAssertEqual([image.width, image.height], [31, 21])
        let frames = try image.allFrames().map { $0.buffer.converted(to: .rgba8) }
        XCTAssertEqual(frames[0].pixel(x: 0, y: 0), RGBA(r: 200, g: 0, b: 0))
        for (i, frame) in frames.enumerated() {
            // The mark at the source's (30, 20) is at (25, 15) of every frame: one box for all.
            let mark = frame.pixel(x: 27, y: 17)
            XCTAssertEqual(mark.g, 200, "frame \(i): \(mark)")
            XCTAssertEqual(Int(mark.r), 60 * i, accuracy: 8, "frame \(i) shows its own source frame: \(mark)")
        }
        XCTAssertEqual(frames[1].pixel(x: 0, y: 0), RGBA(r: 255, g: 255, b: 255), "frame 1 has no block")
    }

    func testOtherAnimatedSourcesGiveTheirFirstFrameAsThumborsDo() async throws {
        try serve("anim.webp", format: .webp, contentType: "image/webp")
        let image = try await get("20x15", "anim.webp")
        XCTAssertEqual(image.format, .webp)
        XCTAssertEqual(image.frameCount, 1, "thumbor's PIL engine animates GIFs only")
    }

    func testAFormatThatCannotAnimateGivesTheFirstFrame() async throws {
        // thumbor skips every filter on a GIF (and answers a GIF); ours applies them: a PNG of the first frame.
        try serve("anim.gif", format: .gif, contentType: "image/gif")
        let png = try await get("20x15/filters:format(png)", "anim.gif")
        XCTAssertEqual(png.format, .png)
        XCTAssertEqual(png.frameCount, 1)
        let webp = try await get("20x15/filters:format(webp)", "anim.gif")
        XCTAssertEqual(webp.format, .webp)
        XCTAssertEqual(webp.frameCount, 3, "an animated WebP keeps the frames")
    }
}
