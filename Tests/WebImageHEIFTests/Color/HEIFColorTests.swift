import Foundation
@testable import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// HEIF `colr`: the iPhone's Display P3 ICC profile and CICP (sRGB, PQ) through the colour stage.
final class HEIFColorTests: XCTestCase {
    private func file(_ name: String) throws -> Data {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent("color/heic/\(name)").path) else {
            throw XCTSkip("color/heic/\(name) missing")
        }
        return data
    }

    private func decode(_ data: Data, _ management: ColorManagement = .sRGB, maxPixelSize: Int? = nil) throws -> Image {
        try HEIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: maxPixelSize,
                                                              colorManagement: management))
    }

    /// iPhone HEIC (Display P3 ICC): against heif-convert's PNG (which keeps the profile) through ImageMagick's
    /// Little CMS, both as 512 px thumbnails.
    func testDisplayP3HEICMatchesLittleCMS() throws {
        for tool in ["heif-convert", "convert"] where ReferenceDecoder.path(of: tool) == nil { throw XCTSkip("\(tool) missing") }
        let data = try file("vips_Example1.heic")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("heif-colour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("in.heic"), decoded = dir.appendingPathComponent("dec.png")
        let reference = dir.appendingPathComponent("ref.png")
        try data.write(to: source)
        _ = try ReferenceDecoder.run("heif-convert", [source.path, decoded.path])
        _ = try ReferenceDecoder.run("convert", [decoded.path, "-intent", "relative", "-black-point-compensation", "-profile",
                                                 "/usr/share/color/icc/sRGB.icc", "-depth", "8", "PNG32:" + reference.path])
        let ref = try ImageDecoder.decode(Data(contentsOf: reference),
                                          options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: 512, colorManagement: .preserve))
        let ours = try decode(data, maxPixelSize: 512)
        XCTAssertEqual(ours.colorSpace?.iccProfile?.count, 548)
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, ref.firstFrame.buffer),
              let raw = ColorDifference.stats(try decode(data, .preserve, maxPixelSize: 512).firstFrame.buffer, ref.firstFrame.buffer)
        else { return XCTFail("sizes differ") }
        print("Example1: ours \(stats), raw \(raw)")
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
    }

    /// CICP 1/13 (sRGB, identity matrix): untouched.
    func testSRGBCICPIsBitIdentical() throws {
        let data = try file("sixel_snake-heic-10bit-lossless-64.heic")
        XCTAssertEqual(try decode(data).firstFrame.buffer, try decode(data, .preserve).firstFrame.buffer)
    }

    /// CICP 9/16 (BT.2020, PQ): the documented tone map, not the raw code values.
    func testPQHEICIsToneMapped() throws {
        let data = try file("sdw_TestHDR.heic")
        let ours = try decode(data)
        XCTAssertEqual(ours.colorSpace?.cicp?.transferCharacteristics, 16)
        let raw = try decode(data, .preserve).firstFrame.buffer
        let expected = try ColorReference.render(raw, sourceToXYZ: ColorReference.bt2020ToXYZ) {
            HDRToneMap.compress(HDRToneMap.luminance($0, transfer: .pq) / HDRToneMap.referenceWhite)
        }
        guard let stats = ColorDifference.stats(ours.firstFrame.buffer, expected),
              let naive = ColorDifference.stats(raw, expected) else { return XCTFail("sizes differ") }
        print("TestHDR: ours \(stats), naive \(naive)")
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertGreaterThan(naive.mean, 5)
    }

    /// The transform is per pixel, so a thumbnail is converted after its resize: the sRGB thumbnail is exactly the
    /// `.preserve` thumbnail through the same conversion.
    func testThumbnailIsConvertedAfterTheResize() throws {
        let data = try file("ph_pug.heic")
        let preserved = try decode(data, .preserve, maxPixelSize: 256)
        let conversion = ColorConversion(colorSpace: preserved.colorSpace, management: .sRGB)
        XCTAssertTrue(conversion.changesPixels, "a Display P3 HEIC is converted")
        var expected = preserved.firstFrame.buffer
        conversion.apply(to: &expected)
        XCTAssertEqual(try decode(data, maxPixelSize: 256).firstFrame.buffer, expected)
    }
}
