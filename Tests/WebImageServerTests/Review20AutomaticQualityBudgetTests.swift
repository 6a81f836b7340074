import Foundation
import ImageCodec
import Synchronization
import TestSupport
import WebImageServerCore
import XCTest

/// The decode budget of a `q=auto` render: its scored search holds SSIMULACRA2's prepared references (three for
/// a transparent image: grey, black and white, `ScoringReference`), their scratch planes and a decoded candidate
/// with its composites, about 50 times the output's RGBA, besides the encoder. The budget counted none of it.
final class Review20AutomaticQualityBudgetTests: XCTestCase {
    /// A noisy picture with an alpha gradient (transparent at the left, opaque at the right), as PNG.
    static func transparentPNG(width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let i = (y * width + x) * 4
                bytes[i] = UInt8(truncatingIfNeeded: x + Int(state >> 60))
                bytes[i + 1] = UInt8(truncatingIfNeeded: y + Int(state >> 58))
                bytes[i + 2] = UInt8(truncatingIfNeeded: (x + y) / 2)
                bytes[i + 3] = UInt8(x * 255 / max(1, width - 1))
            }
        }
        return try PNGEncoder.encode(try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes),
                                     options: EncodeOptions())
    }

    /// Serves `source` to a server (`configure`d) and asks for `query` of it: the resident growth during the request
    /// stays within what the budget held (plus `RenderBudgetAccountingTests.overhead`).
    private func assertReserved(_ source: Data, contentType: String, _ query: [(String, String)], _ label: String,
                                configure: (inout ImageServiceConfiguration) -> Void = { _ in }) async throws {
        ResidentMemory.mapLargeBlocks()
        let harness = try await ServerHarness(configure: configure)
        harness.origin.route("/source", .bytes(source, contentType: contentType))
        let (status, most, growth) = try await RenderBudgetAccountingTests.measure(
            harness, url: harness.imageURL([("url", harness.source("/source"))] + query))
        await harness.stop()
        XCTAssertEqual(status, 200, label)
        print("ACCOUNTING \(label): budget held \(most) bytes at most, resident grew \(growth)")
        XCTAssertLessThanOrEqual(growth, most + RenderBudgetAccountingTests.overhead, "\(label): the render held \(growth) bytes, the budget \(most)")
    }

    /// A transparent 600×600 PNG as `q=auto` WebP at its own size.
    func testAScoredSearchIsReserved() async throws {
        try await assertReserved(try Self.transparentPNG(width: 600, height: 600), contentType: "image/png",
                                 [("w", "600"), ("format", "webp"), ("q", "auto")], "q=auto WebP of a transparent 600×600")
    }

    /// `q=auto` AVIF re-encodes its winner at libaom's speed 5 (`AutomaticQuality.avifRefinementSpeed`), which holds
    /// about 90 MB more than the search's speed 8 at 1000×625 (PastelHills: 123 MB in `avifenc` against 32 MB). No
    /// render deadline, so the re-encode is never skipped.
    func testAVIFReEncodeAtSpeedFiveIsReserved() async throws {
        let photo: Data
        do {
            photo = try Data(contentsOf: try Corpus.require().appendingPathComponent("photos/kdewallpapers_PastelHills_3200x2000.jpg"))
        } catch { throw XCTSkip("\(error)") }
        try await assertReserved(photo, contentType: "image/jpeg", [("w", "1000"), ("format", "avif"), ("q", "auto")],
                                 "q=auto AVIF of 1000×625 with the speed-5 re-encode") { $0.renderTimeout = 0 }
    }
}
