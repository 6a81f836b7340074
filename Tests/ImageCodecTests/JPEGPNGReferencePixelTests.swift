import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Our pixels against independent decoders run at test time: `djpeg` for JPEG (tolerance: libjpeg-turbo
/// versions differ slightly), ImageMagick `convert` for PNG (exact for 8-bit, ±1 for 16-bit scaling). These check the
/// codecs' pixels, so they decode with `ColorManagement.preserve` like the raw reference decoders; colour management
/// is checked against Little CMS in `ColorCorpusTests`.
final class JPEGPNGReferencePixelTests: XCTestCase {
    private func straight(_ url: URL) throws -> PixelBuffer {
        try ImageDecoder.decode(try Data(contentsOf: url), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
    }

    func testJPEGMatchesDjpeg() throws {
        guard ReferenceDecoder.path(of: "djpeg") != nil else { throw XCTSkip("djpeg is not installed") }
        let entries = try JPEGPNGCorpusCheck.entries(format: "jpeg").filter {
            $0.isExpectedOK && !$0.isHuge && ($0.refWarnings ?? 0) == 0 && ($0.bytes ?? 0) < 600_000
                && !$0.notes.contains("CMYK") && !$0.notes.contains("YCCK")
        }
        XCTAssertGreaterThan(entries.count, 20)
        for entry in entries {
            guard let reference = try ReferenceDecoder.djpeg(entry.url) else { continue }
            let ours = try straight(entry.url)
            XCTAssertEqual(ours.width, reference.width, entry.path)
            XCTAssertEqual(ours.height, reference.height, entry.path)
            guard ours.width == reference.width, ours.height == reference.height else { continue }
            let a = ours.packedBytes
            XCTAssertLessThanOrEqual(ReferenceDecoder.maxDifference(a, reference.rgba), 3, entry.path)
        }
    }

    /// CMYK and YCCK (Adobe inverted) against ImageMagick's naive CMYK→RGB (no ICC profile on either side).
    func testCMYKAndYCCKAreConvertedToRGBLikeImageMagick() throws {
        guard ReferenceDecoder.path(of: "convert") != nil else { throw XCTSkip("ImageMagick convert is not installed") }
        let entries = try JPEGPNGCorpusCheck.entries(format: "jpeg").filter {
            $0.isExpectedOK && ($0.notes.contains("CMYK") || $0.notes.contains("YCCK"))
        }
        XCTAssertFalse(entries.isEmpty)
        for entry in entries {
            guard let reference = try ReferenceDecoder.imageMagickFrames(entry.url)?.first else { continue }
            let ours = try straight(entry.url)
            guard ours.width == reference.width, ours.height == reference.height else {
                XCTFail("\(entry.path): size differs"); continue
            }
            XCTAssertGreaterThan(ReferenceDecoder.psnr(ours.packedBytes, reference.rgba), 30, entry.path)
        }
    }

    /// Known, explained differences: ImageMagick ignores an out-of-range tRNS gray value that libpng masks
    /// to the bit depth (`pillow_1_trns`), and places `sharp_p3` by its oFFs/caNv page geometry.
    private static let imageMagickDifferences: Set<String> = ["png/pillow_1_trns.png", "png/sharp_p3.png"]

    /// Every accepted PngSuite file (every colour type, bit depth, tRNS and Adam7) and other small PNGs.
    /// No colour management on either side: gAMA, cHRM, iCCP are not applied.
    func testPNGMatchesImageMagick() throws {
        guard ReferenceDecoder.path(of: "convert") != nil else { throw XCTSkip("ImageMagick convert is not installed") }
        let entries = try JPEGPNGCorpusCheck.entries(format: "png").filter {
            $0.isExpectedOK && !$0.isHuge && ($0.path.contains("pngsuite_") || ($0.bytes ?? 0) < 2_000) && !Self.imageMagickDifferences.contains($0.path)
        }
        var compared = 0
        var mismatches: [String] = []
        let ours = try entries.map { try straight($0.url) }
        // Batches of files per `convert` process; a batch ImageMagick refuses (some files libpng accepts,
        // e.g. out-of-range palette indices, it does not) is retried file by file, skipping the refused ones.
        for start in stride(from: 0, to: entries.count, by: 24) {
            let range = start..<min(entries.count, start + 24)
            let files = range.map { (url: entries[$0].url, width: ours[$0].width, height: ours[$0].height) }
            var references: [ReferenceDecoder.Raster?]
            do {
                references = try ReferenceDecoder.imageMagickPixelsAsStored(files) ?? []
            } catch is ReferenceDecoder.ToolError {
                references = files.map { file in
                    do { return try ReferenceDecoder.imageMagickPixelsAsStored([file])?.first } catch { return nil }
                }
            }
            for (k, index) in range.enumerated() where k < references.count {
                guard let reference = references[k] else { continue }
                compared += 1
                let sixteen = entries[index].notes.contains("bit_depth=16")
                let diff = difference(ours[index].packedBytes, reference.rgba)
                if diff > (sixteen ? 1 : 0) { mismatches.append("\(entries[index].path): max difference \(diff)") }
            }
        }
        XCTAssertGreaterThan(compared, 100)
        XCTAssertEqual(mismatches, [])
    }

    /// The largest channel difference; colour is compared only where both alphas exceed 1 (a transparent pixel
    /// has no colour, and 16→8-bit alpha rounding may make 0 vs 1 there).
    private func difference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var worst = 0
        for i in stride(from: 0, to: min(a.count, b.count), by: 4) {
            worst = max(worst, abs(Int(a[i + 3]) - Int(b[i + 3])))
            guard a[i + 3] > 1, b[i + 3] > 1 else { continue }
            for c in 0..<3 { worst = max(worst, abs(Int(a[i + c]) - Int(b[i + c]))) }
        }
        return a.count == b.count ? worst : 255
    }
}
