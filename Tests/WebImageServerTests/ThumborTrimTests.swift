import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// thumbor's `trim` through real HTTP: PNGs made here with a known border (exact boxes, tolerances at and one past
/// their limit, alpha, a uniform image, thumbor's quirks), and corpus files against the sizes thumbor 7.8 answered
/// for the same URLs (scripts/thumbor-compat/run.py).
final class ThumborTrimTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// A `width` × `height` PNG of `border`, with the rectangle `content` (left, top, width, height) painted by
    /// `paint(x, y)` in the rectangle's own coordinates.
    private func serve(_ name: String, width: Int = 100, height: Int = 80, border: RGBA = RGBA(r: 255, g: 255, b: 255),
                       content: (Int, Int, Int, Int)? = (10, 20, 50, 30),
                       paint: (Int, Int) -> RGBA = { x, y in RGBA(r: UInt8(100 + x), g: UInt8(50 + y), b: 0) },
                       edit: (inout PixelBuffer) -> Void = { _ in }) throws {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        for y in 0..<height { for x in 0..<width { buffer.setPixel(x: x, y: y, to: border) } }
        if let (left, top, w, h) = content {
            for y in 0..<h { for x in 0..<w { buffer.setPixel(x: left + x, y: top + y, to: paint(x, y)) } }
        }
        edit(&buffer)
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(buffer)
        harness.origin.route("/\(name)", .bytes(Array(try encoder.encode()), contentType: "image/png"))
    }

    private func get(_ part: String, _ name: String) async -> ServerHarness.Reply {
        let origin = "127.0.0.1:\(harness.origin.url("/").port!)"
        return await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/unsafe/\(part)/\(origin)/\(name)")!)
    }

    private func size(_ part: String, _ name: String, file: StaticString = #filePath, line: UInt = #line) async throws -> [Int] {
        let reply = await get(part, name)
        XCTAssertEqual(reply.status, 200, "\(part): \(String(decoding: reply.body.prefix(200), as: UTF8.self))", file: file, line: line)
        guard reply.status == 200 else { return [] }
        let image = try reply.decoded(file: file, line: line)
        return [image.width, image.height]
    }

    func testTrimCutsTheBorderOfEitherCornersColour() async throws {
        try serve("box.png")
        // Every form: the content is 50 × 30 whichever corner is the reference (the border is one colour).
        for part in ["trim", "trim:top-left", "trim:bottom-right", "trim:top-left:0", "trim:bottom-right:5"] {
            let measured = try await size(part, "box.png")
            XCTAssertEqual(measured, [50, 30], part)
        }
        // The trimmed image's first pixel is the content's.
        let image = try await get("trim", "box.png").decoded()
        XCTAssertEqual(image.firstFrame.buffer.converted(to: .rgba8).pixel(x: 0, y: 0), RGBA(r: 100, g: 50, b: 0))
        // Before the resize: a crop to 25 × 15 of the 50 × 30 content, a fit-in inside it.
        let cover = try await size("trim/25x15", "box.png")
        XCTAssertEqual(cover, [25, 15])
        let fitIn = try await size("trim/fit-in/200x200", "box.png")
        XCTAssertEqual(fitIn, [50, 30], "fit-in never scales up: the trimmed size")
        let orig = try await size("trim/origx10", "box.png")
        XCTAssertEqual(orig, [50, 10])
    }

    func testTheManualCropIsCutFromWhatTheTrimLeft() async throws {
        try serve("box.png")
        // The box stays in the source's pixels (thumbor shifts it by the trim's origin into the trimmed image and
        // clamps it there): 15x25:35x35 is 20 × 10 from the content's (5, 5).
        let reply = await get("trim/15x25:35x35/0x0", "box.png")
        let image = try reply.decoded()
        XCTAssertEqual([image.width, image.height], [20, 10])
        XCTAssertEqual(image.firstFrame.buffer.converted(to: .rgba8).pixel(x: 0, y: 0), RGBA(r: 105, g: 55, b: 0))
        // Clamped to the trimmed image: 50x40:90x90 keeps 10 × 10 of it.
        let clamped = try await size("trim/50x40:90x90/0x0", "box.png")
        XCTAssertEqual(clamped, [10, 10])
        // A box wholly in the trimmed border is ignored: the trim alone (thumbor's empty crop).
        let outside = try await size("trim/70x0:90x10/0x0", "box.png")
        XCTAssertEqual(outside, [50, 30])
        // Without the trim the same box is the source's.
        let untrimmed = try await size("70x0:90x10/0x0", "box.png")
        XCTAssertEqual(untrimmed, [20, 10])
    }

    func testToleranceIsTheEuclideanRGBDistanceAtAndOnePast() async throws {
        // A ring one pixel wide around the content at distance exactly 10 from the white border: (255, 249, 247) is
        // √(0 + 36 + 64) = 10 away.
        try serve("ring.png", edit: { buffer in
            for x in 9...60 { buffer.setPixel(x: x, y: 19, to: RGBA(r: 255, g: 249, b: 247)); buffer.setPixel(x: x, y: 50, to: RGBA(r: 255, g: 249, b: 247)) }
            for y in 19...50 { buffer.setPixel(x: 9, y: y, to: RGBA(r: 255, g: 249, b: 247)); buffer.setPixel(x: 60, y: y, to: RGBA(r: 255, g: 249, b: 247)) }
        })
        let atLimit = try await size("trim:top-left:10", "ring.png")
        XCTAssertEqual(atLimit, [50, 30], "a distance of exactly the tolerance is border")
        let onePast = try await size("trim:top-left:9", "ring.png")
        XCTAssertEqual(onePast, [52, 32], "a distance one past the tolerance is content")
        let exact = try await size("trim", "ring.png")
        XCTAssertEqual(exact, [52, 32])
        // A tolerance past every distance leaves nothing: the trim is ignored (the whole image).
        let everything = try await size("trim:top-left:442", "ring.png")
        XCTAssertEqual(everything, [100, 80])
        let huge = try await size("trim:top-left:99999999999999999999999", "ring.png")
        XCTAssertEqual(huge, [100, 80])
    }

    func testAlphaCountsInTheDistance() async throws {
        // Transparent border, half-transparent content: the content differs from the corner by its alpha too.
        try serve("alpha.png", border: RGBA(r: 0, g: 0, b: 0, a: 0), paint: { _, _ in RGBA(r: 200, g: 10, b: 10, a: 128) })
        let measured = try await size("trim", "alpha.png")
        XCTAssertEqual(measured, [50, 30])
        // Same colour, only alpha differs (0 vs 40): distance 40.
        try serve("faint.png", border: RGBA(r: 0, g: 0, b: 0, a: 0), paint: { _, _ in RGBA(r: 0, g: 0, b: 0, a: 40) })
        let kept = try await size("trim:top-left:39", "faint.png")
        XCTAssertEqual(kept, [50, 30])
        let ignored = try await size("trim:top-left:40", "faint.png")
        XCTAssertEqual(ignored, [100, 80], "alpha 40 is within a tolerance of 40: nothing left, trim ignored")
    }

    func testTheDistanceIsOnStraightPixelsAsStoredNotPremultiplied() async throws {
        // thumbor reads PIL's straight RGBA as stored: a transparent white border around transparent black content
        // is 441 apart, and (200,100,50,3) vs (201,100,50,3) is 1 apart, though premultiplied they are identical.
        // thumbor 7.8's `_bounding_box.apply` gives (10, 20, 59, 49) for both: the 50 × 30 content.
        try serve("clear.png", border: RGBA(r: 255, g: 255, b: 255, a: 0), paint: { _, _ in RGBA(r: 0, g: 0, b: 0, a: 0) })
        let clear = try await size("trim", "clear.png")
        XCTAssertEqual(clear, [50, 30], "transparent pixels keep their colour in thumbor's distance")
        try serve("faint3.png", border: RGBA(r: 200, g: 100, b: 50, a: 3), paint: { _, _ in RGBA(r: 201, g: 100, b: 50, a: 3) })
        let faint = try await size("trim", "faint3.png")
        XCTAssertEqual(faint, [50, 30], "a one-level difference under alpha 3 is still a distance of 1")
    }

    func testNothingLeftIgnoresTheTrimAsThumborDoes() async throws {
        try serve("uniform.png", content: nil)
        let uniform = try await size("trim", "uniform.png")
        XCTAssertEqual(uniform, [100, 80])
        let resized = try await size("trim/50x0", "uniform.png")
        XCTAssertEqual(resized, [50, 40])
        // thumbor's scan does not let a row's leftmost far pixel set the right edge: a single dot, or a one-pixel-wide
        // line, leaves the right edge left of the left one, and thumbor ignores the trim (its quirk, kept).
        try serve("dot.png", content: (30, 30, 1, 1))
        let dot = try await size("trim", "dot.png")
        XCTAssertEqual(dot, [100, 80])
        try serve("line.png", content: (30, 10, 1, 40))
        let line = try await size("trim", "line.png")
        XCTAssertEqual(line, [100, 80])
        // Two pixels wide: trimmed.
        try serve("bar.png", content: (30, 10, 2, 40))
        let bar = try await size("trim", "bar.png")
        XCTAssertEqual(bar, [2, 40])
    }

    func testTrimColonNumberIsThumborsBottomRightWithoutTolerance() async throws {
        // thumbor reads `trim:15` as the corner "15" (not top-left, so bottom-right) with tolerance 0.
        try serve("corners.png", edit: { buffer in
            buffer.setPixel(x: 0, y: 0, to: RGBA(r: 250, g: 250, b: 250))   // top-left differs by √75 ≈ 8.7
        })
        let tolerant = try await size("trim:top-left:15", "corners.png")
        XCTAssertEqual(tolerant, [50, 30])
        let quirk = try await size("trim:15", "corners.png")
        XCTAssertEqual(quirk, [60, 50], "bottom-right, tolerance 0: the top-left pixel is content")
        let topLeft = try await size("trim", "corners.png")
        XCTAssertEqual(topLeft, [100, 80], "the off-white corner is the reference: every white pixel is content")
    }

    func testATrimsDecodeIsHeldToTheSourceLimits() async throws {
        await harness.stop()
        harness = try await ServerHarness { $0.decodeLimits.maxPixelsPerFrame = 4000 }
        try serve("box.png")
        let trimmed = await get("trim", "box.png")
        let plain = await get("0x0", "box.png")
        XCTAssertEqual(trimmed.status, plain.status, "a trim answers what the render answers for a source over the limits")
        XCTAssertGreaterThanOrEqual(trimmed.status, 400)
        XCTAssertEqual(harness.service.manager.decodeBudget.bytesInUse, 0)
        XCTAssertEqual(harness.service.statistics.decodes, 0, "nothing was decoded")
    }

    func testBadInputGetsThumborsStatusesWithATrim() async throws {
        harness.origin.route("/page.png", .bytes(Array("<html>maintenance</html>".utf8), contentType: "image/png"))
        let notAnImage = await get("trim", "page.png")
        XCTAssertEqual(notAnImage.status, 400, "thumbor answers 400 for a source its engine cannot read")
        let missing = await get("trim:bottom-right:3", "missing.png")
        XCTAssertEqual(missing.status, 404)
        // A 1 × 1 image is its own reference: nothing differs, the trim is ignored.
        try serve("one.png", width: 1, height: 1, content: nil)
        let one = try await size("trim", "one.png")
        XCTAssertEqual(one, [1, 1])
        // A truncated PNG: an error, and the budget is given back.
        var truncated = try TestImages.gradient(width: 300, height: 200, format: .png)
        truncated.removeLast(truncated.count / 2)
        harness.origin.route("/truncated.png", .bytes(truncated, contentType: "image/png"))
        let broken = await get("trim", "truncated.png")
        XCTAssertGreaterThanOrEqual(broken.status, 400)
        XCTAssertEqual(harness.service.manager.decodeBudget.bytesInUse, 0)
    }

    func testTrimmedResultsAreCachedApartFromUntrimmed() async throws {
        try serve("box.png")
        let plain = try await size("0x0", "box.png")
        let trimmed = try await size("trim", "box.png")
        let again = try await size("0x0", "box.png")
        XCTAssertEqual(plain, [100, 80])
        XCTAssertEqual(trimmed, [50, 30])
        XCTAssertEqual(again, [100, 80])
    }

    /// Corpus files against thumbor 7.8's answers for the same URLs (its sizes, from scripts/thumbor-compat/run.py).
    func testCorpusTrimsMatchThumborsSizes() async throws {
        let corpus: URL
        do { corpus = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let files = ["logo.png": "photos/kingfisher_logo@2x.png", "library.png": "photos/kingfisher_add-library.png",
                     "memtrace.png": "photos/libvips_Memtrace.png", "katherine.jpg": "photos/thumbor_800px-Katherine_Maher.jpg"]
        for (name, path) in files {
            harness.origin.route("/\(name)", .bytes(Array(try Data(contentsOf: corpus.appendingPathComponent(path))),
                                                    contentType: "application/octet-stream"))
        }
        let cases: [(String, String, [Int])] = [
            ("trim", "logo.png", [893, 779]),
            ("trim:top-left:50", "library.png", [752, 660]),
            ("trim:bottom-right:200", "library.png", [736, 636]),
            ("trim:bottom-right", "memtrace.png", [713, 435]),
            ("trim:top-left:10", "memtrace.png", [713, 443]),
            ("trim:bottom-right:200", "katherine.jpg", [435, 453]),
        ]
        for (part, name, expected) in cases {
            let measured = try await size(part, name)
            XCTAssertEqual(measured, expected, "\(part) \(name)")
        }
    }
}
