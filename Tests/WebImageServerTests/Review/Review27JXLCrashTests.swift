import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Review 27 (issue #32): libjxl 0.7 (Debian's 0.7.0) dies with SIGSEGV encoding a narrow, tall image at a lossy
/// distance of about 6 or more, at every effort: a flat 8×4000 (also 1×4000, 4×4000, 8×3000, 8×4096; not 8×2000,
/// 12×4000 or 8×8000). `cjxl -d 8.2 -e 5 --num_threads=0` on such a PPM crashes the same way. `JXLEncoder` hands any
/// size to it, so one request (`format=jxl&q=10`, or `q=auto:low`, whose search tries those distances) takes the
/// whole server process down. Run in a child process (`FreshProcess`): the crash is the child's.
final class Review27JXLCrashTests: XCTestCase {
    /// An opaque flat 8 × 4000 PNG.
    private func strip() throws -> [UInt8] {
        var buffer = try PixelBuffer(width: 8, height: 4000, pixelFormat: .rgba8)
        for y in 0..<4000 { for x in 0..<8 { buffer.setPixel(x: x, y: y, to: RGBA(r: 200, g: 30, b: 90)) } }
        return Array(try Image(buffer: buffer).encoded(as: .png))
    }

    func testANarrowTallJPEGXLAtLowQualityDoesNotKillTheServer() async throws {
        if try FreshProcess.runsAlone(self, module: "WebImageServerTests") { return }
        let harness = try await ServerHarness()
        harness.origin.route("/strip.png", .bytes(try strip(), contentType: "image/png"))
        for quality in ["10", "auto:low"] {
            let reply = await harness.image([("url", harness.source("/strip.png")), ("format", "jxl"), ("q", quality)])
            XCTAssertEqual(reply.status, 200, "q=\(quality)")
            XCTAssertEqual(try? reply.decoded().height, 4000, "q=\(quality)")
        }
        let health = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/healthz")!)
        XCTAssertEqual(health.status, 200, "the server is still there")
        await harness.stop()
    }
}
