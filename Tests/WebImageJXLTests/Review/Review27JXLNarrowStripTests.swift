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

    /// Every narrow shape where `cjxl` was measured to crash (VarDCT at distance 4.5 and more: widths 1–8 and 17–24
    /// at heights 2,100–4,096; modular at 25: 1 and 2 × 1,000), lying down too, flat and noisy, at qualities down to 0
    /// (distance 25), encodes and reads back at its size: `JXLEncoder.narrowImageMaximumDistance` keeps them out.
    func testEveryNarrowShapeThatCrashedLibjxlEncodes() throws {
        if try FreshProcess.runsAlone(self, module: "WebImageJXLTests") { return }
        var random = SplitMix64(seed: 0x27)
        for (w, h) in [(1, 1000), (2, 1000), (1, 3000), (4, 2100), (8, 4096), (20, 3000), (24, 4000), (31, 4000)] {
            for (width, height) in [(w, h), (h, w)] {
                for noisy in [false, true] {
                    var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
                    for y in 0..<height { for x in 0..<width {
                        let v = noisy ? UInt8.random(in: 0...255, using: &random) : 120
                        buffer.setPixel(x: x, y: y, to: RGBA(r: v, g: 30, b: 255 - v))
                    } }
                    for quality in [0.0, 0.1, 0.5] {
                        let data = try JXLEncoder().encode([ImageFrame(buffer: buffer)], format: .jpegXL, loopCount: 0,
                                                           options: EncodeOptions(quality: quality))
                        let info = try JXLDecoder().info(data)
                        XCTAssertEqual(info.width, width, "\(width)×\(height) q\(quality)")
                        XCTAssertEqual(info.height, height, "\(width)×\(height) q\(quality)")
                    }
                }
            }
        }
    }
}
