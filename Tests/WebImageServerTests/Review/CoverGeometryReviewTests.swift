import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Review: a `cover` crops before it scales (README: "nothing larger than the output or the decoded source is
/// made"), yet the plan still refuses a request whose *uncropped* scaled size would pass
/// `PixelBuffer.maxProcessedPixelCount` (16384²), with a 422 claiming the small output is over the limit.
final class CoverGeometryReviewTests: XCTestCase {
    func testAnExtremeCoverIsMadeFromItsCropNotRefused() async throws {
        let harness = try await ServerHarness()
        // 2000 × 1 into 1 × 512: scaled by 512 that is 1,024,000 × 512 (524 Mpx, past 16384²), but the crop taken
        // from the source is 1 × 1 and the output 1 × 512 (512 pixels).
        harness.origin.route("/line.png", .bytes(try TestImages.gradient(width: 2000, height: 1, format: .png),
                                                 contentType: "image/png"))
        // Control: the same request on a 1000 × 1 source (262 Mpx scaled, just under 16384²) is served.
        harness.origin.route("/short.png", .bytes(try TestImages.gradient(width: 1000, height: 1, format: .png),
                                                  contentType: "image/png"))
        let control = await harness.image([("url", harness.source("/short.png")), ("w", "1"), ("h", "512"), ("format", "png")])
        XCTAssertEqual(control.status, 200)

        let reply = await harness.image([("url", harness.source("/line.png")), ("w", "1"), ("h", "512"), ("format", "png")])
        XCTAssertEqual(reply.status, 200, "a 1 × 512 output refused")
        if reply.status == 200 {
            let image = try reply.decoded()
            XCTAssertEqual([image.width, image.height], [1, 512])
        }
        // A banner-like source: 20,000 × 10 into an 800 × 800 cover (scaled 1,600,000 × 800 before the crop).
        harness.origin.route("/strip.png", .bytes(try TestImages.gradient(width: 20_000, height: 10, format: .png),
                                                  contentType: "image/png"))
        let strip = await harness.image([("url", harness.source("/strip.png")), ("w", "800"), ("h", "800"), ("format", "png")])
        XCTAssertEqual(strip.status, 200, "an 800 × 800 output refused")
        await harness.stop()
    }
}
