import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Review 27 (issue #32) against the server: what `format=auto` and the AVIF / JPEG XL outputs give a client, through
/// real HTTP on loopback.
final class Review27FormatOutputTests: XCTestCase {
    /// A 3-frame 40×30 GIF that plays `loopCount` times (1: no NETSCAPE2.0 extension).
    private func gif(loopCount: Int) throws -> [UInt8] {
        var encoder = ImageEncoder(format: .gif, loopCount: loopCount)
        for index in 0..<3 {
            var buffer = try PixelBuffer(width: 40, height: 30, pixelFormat: .rgba8)
            for y in 0..<30 { for x in 0..<40 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(index * 90), g: UInt8(x * 6), b: 80)) } }
            encoder.addFrame(buffer, duration: 0.2)
        }
        return Array(try encoder.encode())
    }

    /// `format=auto&anim=1` for a browser that lists AVIF and WebP (Chrome's `Accept`): the GIF plays once, or 3
    /// times, and so must what is served. `format=auto` takes AVIF first for a kept animation, and `AVIFEncoder`
    /// drops the loop count (libavif 0.11 writes no edit list): the served animation loops forever. WebP (next in
    /// the order, accepted by the same client) keeps it.
    func testAutoKeepsTheLoopCountOfAKeptAnimation() async throws {
        let harness = try await ServerHarness()
        let accept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        for loopCount in [1, 3] {
            harness.origin.route("/anim-\(loopCount).gif", .bytes(try gif(loopCount: loopCount), contentType: "image/gif"))
            let reply = await harness.image([("url", harness.source("/anim-\(loopCount).gif")), ("anim", "1"), ("format", "auto")],
                                            headers: ["Accept": accept])
            XCTAssertEqual(reply.status, 200)
            let decoded = try reply.decoded()
            XCTAssertEqual(decoded.frameCount, 3, "kept animated")
            XCTAssertEqual(decoded.loopCount, loopCount,
                           "a GIF that plays \(loopCount)× served as \(reply.header("Content-Type") ?? "?") plays \(decoded.loopCount)× (0 = forever)")
        }
        // Asked for explicitly, AVIF it is, and it loops forever (docs/service.md: libavif 0.11 writes no edit
        // list). When a libavif that writes one is linked, this fails: then `FormatNegotiation.outputFormat`'s loop-count rule and the docs go.
        let reply = await harness.image([("url", harness.source("/anim-1.gif")), ("anim", "1"), ("format", "avif")])
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Content-Type"), "image/avif")
        XCTAssertEqual(try reply.decoded().loopCount, 0, "format=avif writes no loop count (documented)")
        await harness.stop()
    }

    /// docs/colour.md: "`webimage-server` outputs sRGB for every format and source", with no profile and no EXIF
    /// (`ImageServerColorTests`, thumbor's `strip_icc`/`strip_exif` are no-ops because "outputs never carry them").
    /// A Display P3 JPEG carrying EXIF, asked for as `format=jxl` at its own size, is recompressed losslessly
    /// (`JXLEncoder.recompressJPEG`, `JxlEncoderStoreJPEGMetadata`): the output keeps the P3 profile (P3 pixels, not
    /// sRGB) and the source's EXIF (where a camera's GPS position lives), unlike every other output of the same
    /// source.
    func testJPEGXLAtTheSourceSizeIsUntaggedSRGBWithoutEXIF() async throws {
        guard let p3Profile = FileManager.default.contents(atPath: "/usr/share/color/argyll/ref/DisplayP3.icm") else {
            throw XCTSkip("Debian's ICC profiles missing (make test-deps)")
        }
        var buffer = try PixelBuffer(width: 48, height: 32, pixelFormat: .rgba8)
        for y in 0..<32 { for x in 0..<48 { buffer.setPixel(x: x, y: y, to: x < 24 ? RGBA(r: 255, g: 0, b: 0) : RGBA(r: UInt8(x * 5), g: UInt8(y * 7), b: 160)) } }
        let tagged = try Image(frames: [ImageFrame(buffer: buffer)], format: .unknown, loopCount: 1, hasAlpha: false,
                               pixelICCProfile: p3Profile).encoded(as: .jpeg, quality: 0.95)
        // An EXIF segment (orientation 1: nothing to apply, so the JPEG is served "as it is").
        let jpeg = Data(TestImages.withEXIFOrientation(Array(tagged), orientation: 1))
        let harness = try await ServerHarness()
        harness.origin.route("/p3.jpg", .bytes(Array(jpeg), contentType: "image/jpeg"))
        for format in ["webp", "jxl"] {
            let reply = await harness.image([("url", harness.source("/p3.jpg")), ("format", format)])
            XCTAssertEqual(reply.status, 200, format)
            let preserved = try ImageDecoder.decode(reply.body, options: DecodeOptions(colorManagement: .preserve))
            // Untagged, or sRGB said the way the format says it (JPEG XL always signals a colour encoding: CICP 1/13).
            let space = preserved.colorSpace
            let isSRGB = space == nil || space?.isDeclaredSRGB == true
                || (space?.iccProfile == nil && space?.cicp?.colorPrimaries == 1 && space?.cicp?.transferCharacteristics == 13)
            XCTAssertTrue(isSRGB, "\(format): the output says its pixels are \(String(describing: space))")
            XCTAssertNil(reply.body.range(of: Data("Exif".utf8)), "\(format): the output carries the source's EXIF")
            // The pixels, as a viewer without colour management shows them: the source converted to sRGB, not
            // its P3 values as they are.
            let shown = preserved.firstFrame.buffer.converted(to: .rgba8)
            let converted = try ImageDecoder.decode(jpeg, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
            let raw = try ImageDecoder.decode(jpeg, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
            guard let toConverted = ColorDifference.stats(shown, converted), let toRaw = ColorDifference.stats(shown, raw) else {
                XCTFail("\(format): size"); continue
            }
            XCTAssertLessThan(toConverted.mean, toRaw.mean, "\(format): P3 pixels served as they are (to sRGB \(toConverted), to P3 \(toRaw))")
        }
        await harness.stop()
    }

    /// The rule itself: `.auto` skips AVIF for a kept animation that stops (loop count not 0), and only then.
    func testAutoSkipsAVIFOnlyForAnAnimationThatStops() {
        let candidates: [ImageFormat] = [.avif, .webp]
        let pick = { (keeps: Bool, loops: Int) in
            FormatNegotiation.outputFormat(requested: .auto, candidates: candidates, sourceHasAlpha: false,
                                           keepsAnimation: keeps, loopCount: loops, animates: { _ in true })
        }
        XCTAssertEqual(pick(true, 0), .avif, "an animation that loops forever may be AVIF")
        XCTAssertEqual(pick(true, 1), .webp)
        XCTAssertEqual(pick(true, 65_536), .webp)
        XCTAssertEqual(pick(false, 3), .avif, "a still (or an animation not kept) is not about loops")
        XCTAssertEqual(FormatNegotiation.outputFormat(requested: .auto, candidates: [.avif], sourceHasAlpha: false,
                                                      keepsAnimation: true, loopCount: 2, animates: { _ in true }), .gif)
        XCTAssertEqual(FormatNegotiation.outputFormat(requested: .avif, candidates: candidates, sourceHasAlpha: false,
                                                      keepsAnimation: true, loopCount: 2), .avif, "asked for explicitly")
    }
}
