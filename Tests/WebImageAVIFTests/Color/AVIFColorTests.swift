import Foundation
@testable import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// AVIF `colr`: ICC profiles and CICP (SDR and PQ) through the colour stage, on the corpus's `color/avif` files.
final class AVIFColorTests: XCTestCase {
    private func file(_ name: String) throws -> Data {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let url = dir.appendingPathComponent("color/avif/\(name)")
        guard let data = FileManager.default.contents(atPath: url.path) else { throw XCTSkip("color/avif/\(name) missing") }
        return data
    }

    private func decode(_ data: Data, _ management: ColorManagement = .sRGB, maxPixelSize: Int? = nil) throws -> Image {
        try AVIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: maxPixelSize,
                                                              colorManagement: management))
    }

    /// sRGB by CICP (1/13) or by an sRGB ICC profile (with an unspecified nclx beside it): untouched.
    func testSRGBSourcesAreBitIdentical() throws {
        for name in ["libavif_colors_sdr_srgb.avif", "pillow_icc_profile.avif"] {
            let data = try file(name)
            let image = try decode(data)
            XCTAssertNotNil(image.colorSpace, name)
            XCTAssertEqual(image.firstFrame.buffer, try decode(data, .preserve).firstFrame.buffer, name)
        }
    }

    /// A hand-made very wide gamut ICC profile (12-bit): against avifdec's PNG (which keeps the profile) through
    /// ImageMagick's Little CMS, both as 512 px thumbnails.
    func testWideGamutICCMatchesLittleCMS() throws {
        for tool in ["avifdec", "convert"] where ReferenceDecoder.path(of: tool) == nil { throw XCTSkip("\(tool) missing") }
        let data = try file("awx_hato-wide-gamut.avif")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("avif-colour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("in.avif"), decoded = dir.appendingPathComponent("dec.png")
        let reference = dir.appendingPathComponent("ref.png")
        try data.write(to: source)
        _ = try ReferenceDecoder.run("avifdec", [source.path, decoded.path])
        _ = try ReferenceDecoder.run("convert", [decoded.path, "-intent", "relative", "-black-point-compensation", "-profile",
                                                 "/usr/share/color/icc/sRGB.icc", "-depth", "8", "PNG32:" + reference.path])
        let ref = try ImageDecoder.decode(Data(contentsOf: reference),
                                          options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: 512, colorManagement: .preserve))
        let ours = try decode(data, maxPixelSize: 512)
        XCTAssertNotNil(ours.colorSpace?.iccProfile)
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, ref.firstFrame.buffer),
              let raw = ColorDifference.stats(try decode(data, .preserve, maxPixelSize: 512).firstFrame.buffer, ref.firstFrame.buffer)
        else { return XCTFail("sizes differ") }
        print("hato: ours \(stats), raw \(raw)")
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
    }

    /// CICP 9/8 (BT.2020 primaries, linear): against the analytic conversion.
    func testLinearBT2020CICPMatchesTheArithmetic() throws {
        let data = try file("libavif_colors_text_wcg_sdr_rec2020.avif")
        let ours = try decode(data)
        XCTAssertEqual(ours.colorSpace?.cicp?.colorPrimaries, 9)
        let expected = try ColorReference.render(try decode(data, .preserve).firstFrame.buffer,
                                                 sourceToXYZ: ColorReference.bt2020ToXYZ, toLinear: { $0 })
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, expected) else { return XCTFail("sizes differ") }
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
    }

    /// PQ (BT.709 primaries; and BT.2020): tone-mapped with the documented curve (BT.2408 reference white 203
    /// cd/m², roll-off above 0.75), not the raw code values.
    func testPQIsToneMappedWithTheDocumentedCurve() throws {
        for (name, primaries) in [("libavif_colors_hdr_srgb.avif", ColorReference.srgbToXYZ),
                                  ("libavif_colors_hdr_rec2020.avif", ColorReference.bt2020ToXYZ)] {
            let data = try file(name)
            let ours = try decode(data)
            XCTAssertEqual(ours.colorSpace?.cicp?.transferCharacteristics, 16, name)
            let raw = try decode(data, .preserve).firstFrame.buffer
            let expected = try ColorReference.render(raw, sourceToXYZ: primaries) {
                HDRToneMap.compress(HDRToneMap.luminance($0, transfer: .pq) / HDRToneMap.referenceWhite)
            }
            guard let stats = ColorDifference.stats(ours.firstFrame.buffer, expected),
                  let naive = ColorDifference.stats(raw, expected) else { return XCTFail("sizes differ") }
            print("\(name): ours \(stats), naive \(naive)")
            XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(name): \(stats)")
            XCTAssertGreaterThan(naive.mean, 5, "\(name): the naive rendering is far from the tone map")
        }
    }
}
