import Foundation
import ImageCodec
import TestSupport
import XCTest

final class ImageFormatSniffingTests: XCTestCase {
    /// Every decodable corpus file sniffs as the format in MANIFEST.tsv (the two misnamed files included);
    /// a rejected file sniffs as the format its manifest row targets or, when its signature itself is broken
    /// (PngSuite `xs*`, empty files), as `.unknown`.
    func testEveryCorpusFileSniffsAsItsManifestFormat() throws {
        let entries: [Corpus.Entry]
        do { entries = try Corpus.entries() } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        XCTAssertGreaterThan(entries.count, 500)
        var mismatches: [String] = []
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let sniffed = ImageFormat.sniff(data)
            if sniffed.rawValue != entry.format {
                // A broken APNG whose acTL comes after IDAT, or a truncated header, is still a PNG to the sniffer;
                // the manifest files those under "apng" only in bad/.
                if !entry.isExpectedOK, sniffed == .unknown || (entry.format == "apng" && sniffed == .png) { continue }
                mismatches.append("\(entry.path): manifest \(entry.format), sniffed \(sniffed)")
            }
        }
        XCTAssertEqual(mismatches, [], "\(mismatches.count) files sniffed differently")
    }

    func testShortAndEmptyPrefixesAreUnknown() {
        XCTAssertEqual(ImageFormat.sniff([UInt8]()), .unknown)
        XCTAssertEqual(ImageFormat.sniff([0xFF]), .unknown)
        XCTAssertEqual(ImageFormat.sniff([0xFF, 0xD9]), .unknown)
        XCTAssertEqual(ImageFormat.sniff([0x89, 0x50, 0x4E]), .unknown)
        XCTAssertEqual(ImageFormat.sniff(Array("GIF8".utf8)), .unknown)
        XCTAssertEqual(ImageFormat.sniff(Array("RIFF\0\0\0\0WEB".utf8)), .unknown)
    }

    func testMinimalSignatures() {
        XCTAssertEqual(ImageFormat.sniff([0xFF, 0xD8]), .jpeg)
        XCTAssertEqual(ImageFormat.sniff(Array("GIF87a".utf8)), .gif)
        XCTAssertEqual(ImageFormat.sniff(Array("GIF89a".utf8)), .gif)
        XCTAssertEqual(ImageFormat.sniff(Array("RIFF\u{1}\0\0\0WEBPVP8X".utf8)), .webp)
        XCTAssertEqual(ImageFormat.sniff([0x49, 0x49, 0x2A, 0x00]), .tiff)
        XCTAssertEqual(ImageFormat.sniff([0x4D, 0x4D, 0x00, 0x2A]), .tiff)
        XCTAssertEqual(ImageFormat.sniff([0x42, 0x4D] + [UInt8](repeating: 0, count: 12)), .bmp)
        XCTAssertEqual(ImageFormat.sniff([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avifmif1".utf8)), .avif)
        XCTAssertEqual(ImageFormat.sniff([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1".utf8)), .heif)
        // TIFF: recognised, and no codec here decodes it. (Not HEIF: whether it is supported depends on whether
        // a test earlier in this process registered WebImageHEIF, as every ImageService does.)
        XCTAssertTrue(ImageFormat.tiff.isRecognizedButUnsupported)
        XCTAssertEqual(ImageFormat.heif.isRecognizedButUnsupported, !ImageFormat.heif.isDecodable)
        XCTAssertFalse(ImageFormat.webp.isRecognizedButUnsupported)
        XCTAssertFalse(ImageFormat.unknown.isRecognizedButUnsupported)
    }

    func testAPNGNeedsACTLBeforeIDAT() {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let n = UInt32(payload.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                + Array(type.utf8) + payload + [0, 0, 0, 0]
        }
        let ihdr = chunk("IHDR", [UInt8](repeating: 1, count: 13))
        let actl = chunk("acTL", [0, 0, 0, 2, 0, 0, 0, 0])
        let idat = chunk("IDAT", [1, 2, 3])
        XCTAssertEqual(ImageFormat.sniff(signature + ihdr + actl + idat), .apng)
        XCTAssertEqual(ImageFormat.sniff(signature + ihdr + idat + actl), .png)
        XCTAssertEqual(ImageFormat.sniff(signature + ihdr), .png)
        // A chunk length near Int32.max must not overflow the walk.
        XCTAssertEqual(ImageFormat.sniff(signature + [0x7F, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8)), .png)
        XCTAssertEqual(ImageFormat.sniff(signature + [0xFF, 0xFF, 0xFF, 0xFF] + Array("tEXt".utf8)), .png)
    }

    func testRandomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<2_000 {
            let bytes = (0..<(length % 97)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = ImageFormat.sniff(bytes)
            // Valid signature followed by garbage.
            _ = ImageFormat.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bytes)
            _ = ImageFormat.sniff(Array("RIFF".utf8) + bytes)
        }
        // Truncations of a real-looking APNG prefix at every length.
        let prefix: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            + [UInt8](repeating: 0, count: 17) + [0, 0, 0, 8] + Array("acTL".utf8)
        for cut in 0...prefix.count {
            let format = ImageFormat.sniff(Array(prefix.prefix(cut)))
            XCTAssertTrue(format == .unknown || format == .png || format == .apng)
        }
    }
}

/// ISO BMFF brands and both JPEG XL signatures (the optional codec modules depend on them).
final class ModernFormatSniffingTests: XCTestCase {
    private func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
    }

    func testISOBrandsDecideFromTheCompatibleList() {
        XCTAssertEqual(ImageFormat.sniff(ftyp("avif", ["mif1", "miaf"])), .avif)
        XCTAssertEqual(ImageFormat.sniff(ftyp("avis", ["msf1"])), .avif)
        XCTAssertEqual(ImageFormat.sniff(ftyp("mif1", ["avif", "miaf"])), .avif, "AVIF only among the compatible brands")
        XCTAssertEqual(ImageFormat.sniff(ftyp("msf1", ["hevc", "heic"])), .heif)
        XCTAssertEqual(ImageFormat.sniff(ftyp("mif1", ["MiPr", "miaf", "heix"])), .heif)
        // A brand past the first 64 bytes (a long ftyp box) still counts.
        XCTAssertEqual(ImageFormat.sniff(ftyp("mif1", Array(repeating: "miaf", count: 14) + ["avif"])), .avif)
        XCTAssertEqual(ImageFormat.sniff(ftyp("isom", ["mp41"])), .unknown, "an MP4 is no image")
    }

    func testSniffLengthCoversTheFTYPBox() {
        let long = ftyp("mif1", Array(repeating: "miaf", count: 14) + ["avif"])
        XCTAssertEqual(ImageFormat.sniffLength(long), long.count)
        XCTAssertEqual(ImageFormat.sniffLength([0xFF, 0xD8, 0xFF]), 16)
        XCTAssertEqual(ImageFormat.sniffLength([0, 0, 0x10, 0] + Array("ftypavif".utf8)), 128, "capped")
    }

    func testBothJPEGXLSignatures() {
        XCTAssertEqual(ImageFormat.sniff([0xFF, 0x0A, 0xFA, 0x7F]), .jpegXL)
        XCTAssertEqual(ImageFormat.sniff([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0, 0, 0x14]), .jpegXL)
    }

    /// Every AVIF, HEIC and JPEG XL file of `modern/` with an intact header sniffs as its format.
    func testModernCorpusSniffs() throws {
        var checked = 0
        for (folder, format) in [("avif", ImageFormat.avif), ("heic", .heif), ("jxl", .jpegXL)] {
            let entries: [ModernCorpus.Entry]
            do { entries = try ModernCorpus.entries(format: folder) } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
            for entry in entries {
                let data = try Data(contentsOf: entry.url)
                // Empty, or an ftyp the file does not have (the "mini" box format): nothing to recognise.
                if data.isEmpty || entry.path.contains("mini") { continue }
                XCTAssertEqual(ImageFormat.sniff(data), format, entry.path)
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 60)
    }
}
