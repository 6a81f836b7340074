import Foundation
import ImageCodec
import TestSupport
@testable import WebImageJXL
import XCTest

/// Review 27 (issue #32): `JXLEncoder` on a flat 8×4000 image at quality 0.1 (Butteraugli distance 8.2): libjxl 0.7
/// segfaults (as `cjxl -d 8.2` does on the same pixels), killing the process, instead of an output or a typed
/// error. Run in a child process (`FreshProcess`).
final class Review27JXLNarrowStripTests: XCTestCase {
    func testANarrowTallStillAtLowQualityEncodesOrThrows() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageJXLTests") { return }
        var buffer = try PixelBuffer(width: 8, height: 4000, pixelFormat: .rgba8)
        for y in 0..<4000 { for x in 0..<8 { buffer.setPixel(x: x, y: y, to: RGBA(r: 200, g: 30, b: 90)) } }
        for quality in [0.1, 0.2] {
            do {
                let data = try JXLEncoder().encode([ImageFrame(buffer: buffer)], format: .jpegXL, loopCount: 0,
                                                   options: EncodeOptions(quality: quality))
                XCTAssertEqual(try JXLDecoder().info(data).height, 4000)
            } catch is ImageCodecError {
                // A typed refusal is an answer too.
            }
        }
    }
}
