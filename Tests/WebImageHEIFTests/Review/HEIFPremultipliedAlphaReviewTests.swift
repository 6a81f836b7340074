import Foundation
import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// Review: a HEIF whose alpha image is marked premultiplied (`prem` item reference, ISO/IEC 23008-12
/// 6.6.1) holds colour already multiplied by alpha. libheif 1.15 hands the planes back as stored (it
/// does not un-premultiply), so the decoder must label them premultiplied, not straight.
final class HEIFPremultipliedAlphaReviewTests: XCTestCase {
    /// Straight (200, 100, 50) at alpha 128, stored premultiplied as (100, 50, 25): `heif-enc
    /// --premultiplied-alpha` writes the `prem` reference. Decoded straight it must come back as about
    /// (200, 100, 50, 128); decoded for display (premultiplied) as about (100, 50, 25, 128).
    func testPremultipliedAlphaIsNotPremultipliedTwice() throws {
        guard ReferenceDecoder.path(of: "heif-enc") != nil else { throw XCTSkip("heif-enc not installed (libheif-examples)") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("heif-prem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // The PNG holds the premultiplied values; `rgba8` so that the PNG encoder writes them unchanged.
        let stored = try PixelBuffer(width: 64, height: 64, pixelFormat: .rgba8,
                                     bytes: Array([[UInt8]](repeating: [100, 50, 25, 128], count: 64 * 64).joined()))
        let png = dir.appendingPathComponent("prem.png"), heic = dir.appendingPathComponent("prem.heic")
        try Image(buffer: stored).encoded(as: .png, isLossless: true).write(to: png)
        _ = try ReferenceDecoder.run("heif-enc", ["-L", "--premultiplied-alpha", png.path, "-o", heic.path])
        let data = try Data(contentsOf: heic)

        let straight = try HEIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        let display = try HEIFDecoder().decode(data, options: DecodeOptions()).firstFrame.buffer
        func pixel(_ buffer: PixelBuffer) -> [Int] { buffer.withUnsafeBytes { b in (0..<4).map { Int(b[32 * buffer.bytesPerRow + 32 * 4 + $0]) } } }
        func close(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 4 } }
        XCTAssertTrue(close(pixel(straight), [200, 100, 50, 128]), "straight: \(pixel(straight)), stored premultiplied (100, 50, 25, 128)")
        XCTAssertTrue(close(pixel(display), [100, 50, 25, 128]), "premultiplied: \(pixel(display)), premultiplied twice is (50, 25, 12, 128)")
    }
}
