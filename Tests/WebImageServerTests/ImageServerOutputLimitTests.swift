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
}
