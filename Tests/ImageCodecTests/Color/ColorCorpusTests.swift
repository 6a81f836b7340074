import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// The colour stage on the corpus's third-party files (`color/`), each against an independent reference made
/// here by Little CMS through another tool (jpgicc for JPEG, ImageMagick's lcms delegate for PNG and WebP), in
/// CIEDE2000 over every pixel.
final class ColorCorpusTests: XCTestCase {
    /// Our sRGB decode vs the reference; returns the stats after asserting the limits.
    @discardableResult
    private func assertClose(_ name: String, reference: (URL) throws -> Image, meanLimit: Double, p95Limit: Double?,
                             file: StaticString = #filePath, line: UInt = #line) throws -> ColorTestSupport.Stats? {
        let url = try ColorTestSupport.corpusFile(name)
        let data = try Data(contentsOf: url)
        let ours = try ColorTestSupport.decode(data)
        let untouched = try ColorTestSupport.decode(data, .preserve)
        let ref = try reference(url)
        guard let stats = ColorTestSupport.compare(ours.firstFrame.buffer, ref.firstFrame.buffer, file: file, line: line),
              let before = ColorTestSupport.compare(untouched.firstFrame.buffer, ref.firstFrame.buffer, file: file, line: line)
        else { return nil }
        print("\(name): ours \(stats); without colour management \(before)")
        XCTAssertLessThanOrEqual(stats.mean, meanLimit, "\(name): \(stats)", file: file, line: line)
        if let p95Limit { XCTAssertLessThanOrEqual(stats.p95, p95Limit, "\(name): \(stats)", file: file, line: line) }
        XCTAssertNotNil(ours.colorSpace?.iccProfile ?? nil, "\(name) reports its profile", file: file, line: line)
        return stats
    }

    private func jpgicc(_ url: URL) throws -> Image {
        try ColorTestSupport.require(tools: ["jpgicc"], files: [ColorTestSupport.srgbProfile])
        return try ColorTestSupport.jpgiccReference(url)
    }

    private func magick(_ url: URL) throws -> Image {
        try ColorTestSupport.require(tools: ["convert"], files: [ColorTestSupport.srgbProfile])
        return try ColorTestSupport.magickReference(url)
    }

    // MARK: JPEG, ICC RGB

    func testAdobeRGBJPEGMatchesLittleCMS() throws {
        try assertClose("jpeg/vips_sample.jpg", reference: jpgicc, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testGenericRGBJPEGMatchesLittleCMS() throws {
        try assertClose("jpeg/sharp_Landscape_8.jpg", reference: jpgicc, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testDisplayP3iPhoneJPEGMatchesLittleCMS() throws {
        try assertClose("jpeg/libavif_apple_gainmap_old.jpg", reference: jpgicc, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testLabLUTProfileOverSevenChunksMatchesLittleCMS() throws {
        try assertClose("jpeg/pillow_icc_profile_big.jpg", reference: jpgicc, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testXYBJPEGMatchesLittleCMS() throws {
        try assertClose("jpeg/vips_sample-xyb.jpg", reference: jpgicc, meanLimit: 1.0, p95Limit: 2.5)
    }

    // MARK: JPEG, CMYK

    func testYCCKWithSWOPProfileMatchesLittleCMS() throws {
        try assertClose("jpeg/sharp_Channel_digital_image_CMYK_color.jpg", reference: jpgicc, meanLimit: 1.5, p95Limit: nil)
    }

    func testAdobeCMYKWithSWOPProfileMatchesLittleCMS() throws {
        try assertClose("jpeg/thumbor_cmyk-icc.jpg", reference: jpgicc, meanLimit: 1.5, p95Limit: nil)
    }

    // MARK: JPEG, untouched

    /// sRGB-tagged and untagged JPEGs (RGB and CMYK) are not transformed: bit-identical to `.preserve`.
    func testSRGBAndUntaggedJPEGsAreBitIdentical() throws {
        for name in ["jpeg/pillow_flower2.jpg", "jpeg/sharp_Channel_digital_image_CMYK_color_no_profile.jpg",
                     "jpeg/govips_jpg-32bit-cmyk-no-icc.jpg", "jpeg/sixel_snake-jpeg-8bit-cmyk-seq444.jpg"] {
            let data = try Data(contentsOf: try ColorTestSupport.corpusFile(name))
            let managed = try ColorTestSupport.decode(data)
            let untouched = try ColorTestSupport.decode(data, .preserve)
            XCTAssertEqual(managed.firstFrame.buffer, untouched.firstFrame.buffer, name)
            XCTAssertNil(managed.pixelICCProfile, name)
        }
        let flower = try ColorTestSupport.decode(Data(contentsOf: try ColorTestSupport.corpusFile("jpeg/pillow_flower2.jpg")))
        XCTAssertEqual(flower.colorSpace?.iccProfile?.count, 3144, "the sRGB profile is reported, not applied")
    }

    /// Chunk sequences that do not add up (a duplicate and a missing number; a zero number): the profile is
    /// ignored, the image decodes.
    func testBrokenChunkSequencesDecodeAsUntagged() throws {
        for name in ["jpeg/jpegdec_icc_chunk_double_seq_no.jpeg", "jpeg/jpegdec_icc_chunk_seq_no_0.jpeg"] {
            let data = try Data(contentsOf: try ColorTestSupport.corpusFile(name))
            let before = ColorLog.snapshot.count
            let image = try ColorTestSupport.decode(data)
            XCTAssertEqual(image.width, 1, name)
            XCTAssertNil(image.colorSpace, name)
            XCTAssertEqual(image.firstFrame.buffer, try ColorTestSupport.decode(data, .preserve).firstFrame.buffer, name)
            XCTAssertGreaterThan(ColorLog.snapshot.count, before, "\(name): the ignored profile is logged")
        }
    }

    // MARK: Thumbnails

    /// A thumbnail of a tagged JPEG is colour-managed: against the reference decoded to the same size.
    func testThumbnailsOfTaggedJPEGsAreColourManaged() throws {
        try ColorTestSupport.require(tools: ["jpgicc"], files: [ColorTestSupport.srgbProfile])
        for name in ["jpeg/vips_sample.jpg", "jpeg/libavif_apple_gainmap_old.jpg",
                     "jpeg/sharp_Channel_digital_image_CMYK_color.jpg"] {
            let url = try ColorTestSupport.corpusFile(name)
            for size in [200, 100, 40] {
                let ours = try ColorTestSupport.decode(Data(contentsOf: url), maxPixelSize: size)
                let ref = try ColorTestSupport.jpgiccReference(url, maxPixelSize: size)
                let raw = try ColorTestSupport.decode(Data(contentsOf: url), .preserve, maxPixelSize: size)
                guard let stats = ColorTestSupport.compare(ours.firstFrame.buffer, ref.firstFrame.buffer),
                      let before = ColorTestSupport.compare(raw.firstFrame.buffer, ref.firstFrame.buffer) else { continue }
                XCTAssertEqual(max(ours.width, ours.height), size, name)
                XCTAssertLessThanOrEqual(stats.mean, name.contains("CMYK") ? 1.5 : 1.0, "\(name) @\(size): \(stats)")
                XCTAssertLessThan(stats.mean, before.mean, "\(name) @\(size): managed \(stats), raw \(before)")
            }
        }
    }

    // MARK: PNG

    func testDisplayP3PNGMatchesLittleCMS() throws {
        try assertClose("png/sharp_p3.png", reference: magick, meanLimit: 1.0, p95Limit: 2.5)
        let image = try ColorTestSupport.decode(Data(contentsOf: try ColorTestSupport.corpusFile("png/sharp_p3.png")))
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 0, y: 0), RGBA(r: 255, g: 0, b: 0), "sharp's P3 → sRGB expectation")
    }

    func testProPhotoPNGMatchesLittleCMS() throws {
        try assertClose("png/sharp_prophoto.png", reference: magick, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testSixteenBitDisplayP3PNGMatchesLittleCMS() throws {
        try assertClose("png/sdwebp_TestDisplayP3.png", reference: magick, meanLimit: 1.0, p95Limit: 2.5)
    }

    func testSRGBTaggedPNGIsBitIdentical() throws {
        let data = try Data(contentsOf: try ColorTestSupport.corpusFile("png/libavif_paris_icc_exif_xmp.png"))
        let managed = try ColorTestSupport.decode(data)
        XCTAssertNotNil(managed.colorSpace?.iccProfile)
        XCTAssertEqual(managed.firstFrame.buffer, try ColorTestSupport.decode(data, .preserve).firstFrame.buffer)
    }

    /// PNG gAMA (and cHRM with sRGB primaries): the reference is the transfer arithmetic itself, per channel:
    /// linear = v^(1/gAMA), then the sRGB curve (same primaries, so nothing else changes).
    func testGammaPNGsMatchTheirTransferFunction() throws {
        let files: [(String, Double)] = [
            ("png/pngsuite_g03n2c08.png", 0.35), ("png/pngsuite_g04n2c08.png", 0.45), ("png/pngsuite_g05n2c08.png", 0.55),
            ("png/pngsuite_g07n2c08.png", 0.70), ("png/pngsuite_g10n2c08.png", 1.0), ("png/pngsuite_g25n2c08.png", 2.5),
            ("png/pngsuite_ccwn2c08.png", 1.0), ("png/libavif_kodim03_grayscale_gamma1.6.png", 0.625),
        ]
        for (name, gamma) in files {
            let data = try Data(contentsOf: try ColorTestSupport.corpusFile(name))
            let ours = try ColorTestSupport.decode(data)
            XCTAssertEqual(ours.colorSpace?.gamma ?? 0, gamma, accuracy: 0.00001, name)
            var expected = try ColorTestSupport.decode(data, .preserve).firstFrame.buffer
            let table = (0...255).map { v -> UInt8 in
                let linear = pow(Double(v) / 255, 1 / gamma)
                let e = linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
                return UInt8((min(max(e, 0), 1) * 255).rounded())
            }
            for y in 0..<expected.height {
                for x in 0..<expected.width {
                    let p = expected.pixel(x: x, y: y)
                    expected.setPixel(x: x, y: y, to: RGBA(r: table[Int(p.r)], g: table[Int(p.g)], b: table[Int(p.b)], a: p.a))
                }
            }
            guard let stats = ColorTestSupport.compare(ours.firstFrame.buffer, expected) else { continue }
            XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(name): \(stats)")
            XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(name): \(stats)")
        }
    }

    // MARK: WebP

    func testAdobeRGBWebPsMatchLittleCMS() throws {
        try assertClose("webp/sixel_snake_64_embedded_a98_icc.webp", reference: magick, meanLimit: 1.0, p95Limit: 2.5)
        try assertClose("webp/sixel_palette_lossless_embedded_a98_icc.webp", reference: magick, meanLimit: 1.0, p95Limit: 2.5)
    }
}
