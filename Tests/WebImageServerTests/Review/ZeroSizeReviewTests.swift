import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Review: a source whose header declares a zero side (a hostile or broken file) must get a typed error, never
/// a trap: the output geometry divides by the source's sides (`w=` on a 0-wide source is 32 / 0).
final class ZeroSizeReviewTests: XCTestCase {
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    /// `png` with its IHDR width and height set, the chunk's CRC fixed.
    static func png(_ png: [UInt8], width: UInt32, height: UInt32) -> [UInt8] {
        var bytes = png
        for (offset, value) in [(16, width), (20, height)] {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
        }
        let crc = crc32(bytes[12..<29])
        for index in 0..<4 { bytes[29 + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index)) }
        return bytes
    }

    /// `gif` with its logical screen and first image descriptor set to `width` × `height`.
    static func gif(_ gif: [UInt8], width: UInt16, height: UInt16) -> [UInt8] {
        var bytes = gif
        bytes[6] = UInt8(width & 0xFF); bytes[7] = UInt8(width >> 8)
        bytes[8] = UInt8(height & 0xFF); bytes[9] = UInt8(height >> 8)
        if let descriptor = bytes.firstIndex(of: 0x2C) {
            bytes[descriptor + 5] = UInt8(width & 0xFF); bytes[descriptor + 6] = UInt8(width >> 8)
            bytes[descriptor + 7] = UInt8(height & 0xFF); bytes[descriptor + 8] = UInt8(height >> 8)
        }
        return bytes
    }

    func testAZeroSidedSourceIsATypedError() async throws {
        let harness = try await ServerHarness()
        let png = try TestImages.gradient(width: 40, height: 30, format: .png)
        let gif = try TestImages.gradient(width: 40, height: 30, format: .gif)
        let sources: [(String, [UInt8])] = [
            ("/png-0x30", Self.png(png, width: 0, height: 30)), ("/png-40x0", Self.png(png, width: 40, height: 0)),
            ("/gif-0x30", Self.gif(gif, width: 0, height: 30)), ("/gif-40x0", Self.gif(gif, width: 40, height: 0)),
        ]
        for (path, bytes) in sources {
            harness.origin.route(path, .bytes(bytes, contentType: "application/octet-stream"))
            for extra in [[("w", "32")], [("h", "32")], [("w", "32"), ("h", "32")], [("w", "32"), ("h", "32"), ("fit", "contain")], []] {
                let reply = await harness.image([("url", harness.source(path))] + extra)
                XCTAssertTrue([415, 422].contains(reply.status), "\(path) \(extra): \(reply.status)")
            }
        }
        // Control: the server is alive and the unpatched files are served.
        harness.origin.route("/ok.png", .bytes(png, contentType: "image/png"))
        let ok = await harness.image([("url", harness.source("/ok.png")), ("w", "32")])
        XCTAssertEqual(ok.status, 200)
        await harness.stop()
    }
}
