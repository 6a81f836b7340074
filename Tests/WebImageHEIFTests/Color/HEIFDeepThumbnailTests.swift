import Foundation
import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// 10-bit HEIF thumbnails: the colour transform is per pixel, so it runs on a small image, not on the full-size
/// 16-bit image: averaged at 16 bits to twice the thumbnail, converted there at 16 bits, then resized.
final class HEIFDeepThumbnailTests: XCTestCase {
    private func decode(_ data: Data, _ management: ColorManagement = .sRGB, maxPixelSize: Int? = nil) throws -> Image {
        try HEIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: maxPixelSize,
                                                              colorManagement: management))
    }

    /// A 10-bit HEIC tagged Display P3 (ICC), made here: ImageMagick's plasma as a 16-bit PNG, `heif-enc -b 10`.
    static func makeDeepP3HEIC(width: Int, height: Int) throws -> Data {
        let p3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
        for tool in ["convert", "heif-enc"] where ReferenceDecoder.path(of: tool) == nil { throw XCTSkip("\(tool) missing") }
        guard FileManager.default.fileExists(atPath: p3) else { throw XCTSkip("\(p3) missing") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("heif-deep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("in.png"), heic = dir.appendingPathComponent("out.heic")
        _ = try ReferenceDecoder.run("convert", ["-seed", "7", "-size", "\(width)x\(height)", "plasma:", "-depth", "16",
                                                 "-define", "png:color-type=2", "-profile", p3, "PNG48:" + png.path])
        _ = try ReferenceDecoder.run("heif-enc", ["-b", "10", "-q", "90", png.path, "-o", heic.path])
        return try Data(contentsOf: heic)
    }

    private func corpus(_ name: String) throws -> Data {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent("color/heic/\(name)").path) else {
            throw XCTSkip("color/heic/\(name) missing")
        }
        return data
    }

    /// Converted on the small image at 16 bits: the sRGB thumbnail is close to the reference resized the same way
    /// (the whole image converted at 16 bits, as a full-size decode does, then shrunk by the same boxes and
    /// Lanczos-resized: CIEDE2000 mean ≤ 1.0, p95 ≤ 2.5, the goals of an ICC source), and not what converting the
    /// 8-bit `.preserve` thumbnail gives (the deep path ran). The transform ran on the shrunk image
    /// (`deepThumbnailGridSize`), a few times the thumbnail's pixels, not on the image.
    private func assertConvertedAfterTheResize(_ data: Data, _ name: String, sizes: [Int],
                                               file: StaticString = #filePath, line: UInt = #line) throws {
        let whole = try decode(data).firstFrame.buffer
        for size in sizes {
            let preserved = try decode(data, .preserve, maxPixelSize: size)
            let conversion = ColorConversion(colorSpace: preserved.colorSpace, management: .sRGB)
            XCTAssertTrue(conversion.convertsDeepPixels, "\(name): converted at 16 bits", file: file, line: line)
            var eightBit = preserved.firstFrame.buffer
            conversion.apply(to: &eightBit)
            let ours = try decode(data, maxPixelSize: size)
            XCTAssertEqual(max(ours.width, ours.height), size, file: file, line: line)
            XCTAssertEqual(ours.colorSpace, preserved.colorSpace, file: file, line: line)
            XCTAssertNotEqual(ours.firstFrame.buffer, eightBit, "\(name) @\(size): kept 16 bits", file: file, line: line)
            let factor = ColorConversion.deepThumbnailShrinkFactor(width: whole.width, height: whole.height, maxPixelSize: size)
            let grid = ColorConversion.deepThumbnailGridSize(width: whole.width, height: whole.height, maxPixelSize: size)
            XCTAssertLessThanOrEqual(grid.width * grid.height, 16 * ours.width * ours.height, file: file, line: line)
            let reference = try BoxShrink.shrink(whole, factor: factor).resized(width: ours.width, height: ours.height)
            guard let stats = ColorDifference.stats(ours.firstFrame.buffer, reference) else {
                return XCTFail("\(name): sizes differ", file: file, line: line)
            }
            print("\(name) @\(size): deep thumbnail vs 16-bit whole image shrunk and resized the same way \(stats)")
            XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(name) @\(size): \(stats)", file: file, line: line)
            XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(name) @\(size): \(stats)", file: file, line: line)
        }
    }

    func testTaggedTenBitThumbnailIsConvertedAfterTheResize() throws {
        try assertConvertedAfterTheResize(try Self.makeDeepP3HEIC(width: 640, height: 480), "10-bit Display P3 (ICC)",
                                          sizes: [320, 200, 33])
        try assertConvertedAfterTheResize(try corpus("sdw_TestHDR.heic"), "10-bit BT.2020 PQ (CICP)", sizes: [256])
    }

    /// The full-size decode still converts at 16 bits (now from libheif's own plane, rescaled in place).
    func testFullSizeDecodeStillConvertsAtSixteenBits() throws {
        let data = try Self.makeDeepP3HEIC(width: 320, height: 240)
        let preserved = try decode(data, .preserve)
        var eightBit = preserved.firstFrame.buffer
        ColorConversion(colorSpace: preserved.colorSpace, management: .sRGB).apply(to: &eightBit)
        let ours = try decode(data).firstFrame.buffer
        XCTAssertNotEqual(ours, eightBit, "the deep path converts before reducing to 8 bits")
        let stats = try XCTUnwrap(ColorDifference.stats(ours, eightBit))
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
    }
}
