import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Our own fixtures: one chart, tagged with Debian's standard profiles (Display P3, Adobe RGB compatible, and
/// colord's SwappedRedAndGreen, which makes "was the profile applied?" obvious) by ImageMagick (PNG, JPEG) and by
/// our WebP encoder (`pixelICCProfile`), each decoded against ImageMagick's Little CMS rendering of the PNG.
final class ColorFixtureTests: XCTestCase {
    private static let profiles = [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB, ColorTestSupport.swappedRedGreen]

    /// The chart written untagged (our PNG encoder), then tagged by ImageMagick (`-profile` on an untagged image
    /// assigns the profile without converting) as PNG and as a quality-100 4:4:4 JPEG, and by our encoder as
    /// lossless WebP; plus ImageMagick's sRGB rendering of the tagged PNG.
    private func fixtures(profile path: String, in dir: URL) throws -> (png: Data, jpeg: Data, webp: Data, reference: Image) {
        let chartURL = dir.appendingPathComponent("chart.png")
        try Image(buffer: ColorTestSupport.chart()).encoded(as: .png).write(to: chartURL)
        let pngURL = dir.appendingPathComponent("tagged.png")
        let jpegURL = dir.appendingPathComponent("tagged.jpg")
        _ = try ReferenceDecoder.run("convert", [chartURL.path, "-profile", path, pngURL.path])
        _ = try ReferenceDecoder.run("convert", [chartURL.path, "-profile", path, "-quality", "100", "-sampling-factor", "1x1",
                                                 jpegURL.path])
        let profile = try Data(contentsOf: URL(fileURLWithPath: path))
        let tagged = Image(frames: [ImageFrame(buffer: try ColorTestSupport.chart())], format: .unknown, loopCount: 1,
                           hasAlpha: false, pixelICCProfile: profile)
        let webp = try tagged.encoded(as: .webp, quality: 1, isLossless: true)
        return (try Data(contentsOf: pngURL), try Data(contentsOf: jpegURL), webp,
                try ColorTestSupport.magickReference(pngURL))
    }

    func testChartTaggedWithDebianProfilesMatchesLittleCMSInEveryFormat() throws {
        try ColorTestSupport.require(tools: ["convert"], files: Self.profiles + [ColorTestSupport.srgbProfile])
        let dir = try ColorTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        for path in Self.profiles {
            let f = try fixtures(profile: path, in: dir)
            let profile = try Data(contentsOf: URL(fileURLWithPath: path))
            for (format, data) in [("png", f.png), ("jpeg", f.jpeg), ("webp", f.webp)] {
                let ours = try ColorTestSupport.decode(data)
                XCTAssertEqual(ours.colorSpace?.iccProfile, profile, "\(path) \(format): the profile is read back")
                guard let stats = ColorTestSupport.compare(ours.firstFrame.buffer, f.reference.firstFrame.buffer) else { continue }
                XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(path) \(format): \(stats)")
                XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(path) \(format): \(stats)")
            }
        }
    }

    /// A greyscale JPEG with a grey profile (L*-linear, far from sRGB's curve): converted through it, against
    /// jpgicc's rendering of the same file.
    func testGreyJPEGWithGreyProfileMatchesLittleCMS() throws {
        let grey = "/usr/share/color/icc/Gray-CIE_L.icc"
        try ColorTestSupport.require(tools: ["convert", "jpgicc"], files: [grey, ColorTestSupport.srgbProfile])
        let dir = try ColorTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jpeg = dir.appendingPathComponent("grey.jpg")
        _ = try ReferenceDecoder.run("convert", ["-size", "64x64", "gradient:black-white", "-colorspace", "Gray", "-profile", grey,
                                                 "-quality", "100", jpeg.path])
        let data = try Data(contentsOf: jpeg)
        let ours = try ColorTestSupport.decode(data)
        let raw = try ColorTestSupport.decode(data, .preserve)
        let ref = try ColorTestSupport.jpgiccReference(jpeg)
        guard let stats = ColorTestSupport.compare(ours.firstFrame.buffer, ref.firstFrame.buffer),
              let before = ColorTestSupport.compare(raw.firstFrame.buffer, ref.firstFrame.buffer) else { return }
        XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        XCTAssertLessThanOrEqual(stats.p95, 2.5, "\(stats)")
        XCTAssertGreaterThan(before.mean, stats.mean + 1, "the grey curve was applied: raw \(before)")
        let p = ours.firstFrame.buffer.pixel(x: 32, y: 32)
        XCTAssertEqual(p.r, p.g)
        XCTAssertEqual(p.g, p.b)
        XCTAssertEqual(p.a, 255)
    }

    /// SwappedRedAndGreen: a pure red patch comes out green, in every format, at full size and as a thumbnail.
    func testSwappedRedAndGreenIsApplied() throws {
        try ColorTestSupport.require(tools: ["convert"], files: [ColorTestSupport.swappedRedGreen, ColorTestSupport.srgbProfile])
        let dir = try ColorTestSupport.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let f = try fixtures(profile: ColorTestSupport.swappedRedGreen, in: dir)
        for (format, data) in [("png", f.png), ("jpeg", f.jpeg), ("webp", f.webp)] {
            for maxPixelSize in [nil, 32] as [Int?] {
                let image = try ColorTestSupport.decode(data, maxPixelSize: maxPixelSize)
                let scale = image.width == 64 ? 1 : 2
                // Row band 0 is the red ramp; its right end is pure red (255, 0, 0) in the file.
                let p = image.firstFrame.buffer.pixel(x: 60 / scale, y: 4 / scale)
                XCTAssertGreaterThan(Int(p.g), Int(p.r) + 100, "\(format) @\(maxPixelSize ?? 64): \(p) is green")
                let raw = try ColorTestSupport.decode(data, .preserve, maxPixelSize: maxPixelSize).firstFrame.buffer
                    .pixel(x: 60 / scale, y: 4 / scale)
                XCTAssertGreaterThan(Int(raw.r), Int(raw.g) + 100, "\(format): the stored pixel is red")
            }
        }
    }
}
