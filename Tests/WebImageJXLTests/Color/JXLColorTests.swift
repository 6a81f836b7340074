import Foundation
@testable import ImageCodec
import TestSupport
import WebImageJXL
import XCTest

/// JPEG XL colour encodings: XYB files asked for sRGB, ICC and enumerated (CICP-like) encodings through the
/// colour stage, PQ tone-mapped; on the corpus's `color/jxl` files.
final class JXLColorTests: XCTestCase {
    private func url(_ name: String) throws -> URL {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let url = dir.appendingPathComponent("color/\(name)")
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("color/\(name) missing") }
        return url
    }

    private func decode(_ data: Data, _ management: ColorManagement = .sRGB) throws -> Image {
        try JXLDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: management))
    }

    private func png(_ url: URL) throws -> PixelBuffer {
        try ImageDecoder.decode(Data(contentsOf: url), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
            .firstFrame.buffer
    }

    /// A lossy (XYB) grey image with an ICC profile: libjxl renders sRGB for us (its default would be linear),
    /// against the conformance suite's sRGB reference.
    func testXYBGreyWithICCMatchesTheConformanceReference() throws {
        let ours = try decode(Data(contentsOf: url("jxl/conformance_grayscale.jxl")))
        XCTAssertNotNil(ours.colorSpace?.iccProfile)
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, try png(url("reference/conformance_ref_grayscale.png")))
        else { return XCTFail("sizes differ") }
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
    }

    /// An ICC profile with permuted primaries (BRG) on a non-XYB file: through the colour stage, against djxl's
    /// PNG (which keeps the profile) through ImageMagick's Little CMS.
    func testBRGProfileMatchesLittleCMS() throws {
        for tool in ["djxl", "convert"] where ReferenceDecoder.path(of: tool) == nil { throw XCTSkip("\(tool) missing") }
        let source = try url("jxl/conformance_bench_oriented_brg.jxl")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jxl-colour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let decoded = dir.appendingPathComponent("dec.png"), reference = dir.appendingPathComponent("ref.png")
        _ = try ReferenceDecoder.run("djxl", [source.path, decoded.path])
        _ = try ReferenceDecoder.run("convert", [decoded.path, "-intent", "relative", "-black-point-compensation", "-profile",
                                                 "/usr/share/color/icc/sRGB.icc", "-depth", "8", "PNG32:" + reference.path])
        let ours = try decode(Data(contentsOf: source))
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, try png(reference)),
              let raw = ColorDifference.stats(try decode(Data(contentsOf: source), .preserve).firstFrame.buffer, try png(reference))
        else { return XCTFail("sizes differ") }
        print("BRG: ours \(stats), raw \(raw)")
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
    }

    /// Enumerated sRGB: untouched. Enumerated Rec.2100 PQ: tone-mapped with the documented curve.
    func testEnumeratedEncodings() throws {
        let srgb = try Data(contentsOf: url("jxl/toru_D65_SRG_SRG.jxl"))
        XCTAssertEqual(try decode(srgb).firstFrame.buffer, try decode(srgb, .preserve).firstFrame.buffer)
        let pq = try Data(contentsOf: url("jxl/toru_D65_202_PeQ.jxl"))
        let ours = try decode(pq)
        XCTAssertEqual(ours.colorSpace?.cicp?.transferCharacteristics, 16)
        XCTAssertEqual(ours.colorSpace?.cicp?.colorPrimaries, 9)
        let raw = try decode(pq, .preserve).firstFrame.buffer
        let expected = try ColorReference.render(raw, sourceToXYZ: ColorReference.bt2020ToXYZ) {
            HDRToneMap.compress(HDRToneMap.luminance($0, transfer: .pq) / HDRToneMap.referenceWhite)
        }
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, expected),
              let naive = ColorDifference.stats(raw, expected) else { return XCTFail("sizes differ") }
        print("PQ: ours \(stats), naive \(naive)")
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertGreaterThan(naive.mean, 5)
    }

    /// The transform is per pixel, so a thumbnail is converted after its resize: the sRGB thumbnail is exactly the
    /// `.preserve` thumbnail through the same conversion (the BRG ICC profile: converted at 8 bits).
    func testThumbnailIsConvertedAfterTheResize() throws {
        let data = try Data(contentsOf: url("jxl/conformance_bench_oriented_brg.jxl"))
        let options = { (management: ColorManagement) in
            DecodeOptions(pixelFormat: .rgba8, maxPixelSize: 100, colorManagement: management)
        }
        let preserved = try JXLDecoder().decode(data, options: options(.preserve))
        let srgb = try JXLDecoder().decode(data, options: options(.sRGB))
        // What the decoder converted: the data colour space it reports as the source's.
        let conversion = ColorConversion(colorSpace: preserved.colorSpace, management: .sRGB)
        XCTAssertTrue(conversion.changesPixels, "the BRG profile is converted")
        var expected = preserved.firstFrame.buffer
        conversion.apply(to: &expected)
        XCTAssertEqual(max(srgb.width, srgb.height), 100)
        XCTAssertEqual(srgb.firstFrame.buffer, expected)
    }
}
