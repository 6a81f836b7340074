import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// The matrix-shaper fast path against Little CMS's own transform for the same profiles: a 64³ grid of every
/// channel plus seeded random pixels, in CIEDE2000 (limit: max 0.5), for Debian's standard RGB profiles and every
/// RGB profile embedded in the corpus's colour files; and which profiles must keep Little CMS.
final class ColorMatrixShaperTests: XCTestCase {
    /// Standard matrix-shaper RGB profiles (v2 and v4) that must take the fast path to sRGB.
    static let standardProfiles = [
        ColorTestSupport.displayP3,
        ColorTestSupport.adobeRGB,
        "/usr/share/color/icc/colord/AdobeRGB1998.icc",
        "/usr/share/color/icc/ghostscript/a98.icc",
        "/usr/share/color/argyll/ref/ClayRGB1998.icm",
        "/usr/share/color/argyll/ref/ProPhoto.icm",
        "/usr/share/color/icc/colord/ProPhotoRGB.icc",
        "/usr/share/color/argyll/ref/Rec2020.icm",
        "/usr/share/color/argyll/ref/SMPTE431_P3.icm",
        "/usr/share/color/icc/colord/Rec709.icc",
        ColorTestSupport.swappedRedGreen,
    ]

    /// The sample: a 64³ grid over every channel (0, 4, …, 255) and 100,000 seeded random pixels, alpha varied.
    static let sample: [UInt8] = {
        var pixels: [UInt8] = []
        let steps = (0..<64).map { UInt8(($0 * 255 + 31) / 63) }
        pixels.reserveCapacity((64 * 64 * 64 + 100_000) * 4)
        for r in steps { for g in steps { for b in steps { pixels += [r, g, b, r ^ g] } } }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let v = state >> 24
            pixels += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16),
                       UInt8(truncatingIfNeeded: v >> 32)]
        }
        return pixels
    }()

    struct Agreement: CustomStringConvertible {
        var mean = 0.0, p99 = 0.0, max = 0.0
        var identical = 0, count = 0
        var description: String {
            String(format: "ΔE00 mean %.4f p99 %.4f max %.4f; %d of %d pixels identical", mean, p99, max, identical, count)
        }
    }

    /// Runs both transforms over the sample; ΔE00 between their outputs (by the sRGB formula, as the corpus
    /// tests do, whatever the target). Fails if either touched alpha.
    private func agreement(_ fast: MatrixShaperTransform, _ littleCMS: ColorTransform,
                           file: StaticString = #filePath, line: UInt = #line) throws -> Agreement {
        let count = Self.sample.count / 4
        var a = try PixelBuffer(width: count, height: 1, pixelFormat: .rgba8)
        a.withUnsafeMutableBytes { $0.copyBytes(from: Self.sample) }
        var b = a
        fast.apply(to: &a)
        littleCMS.apply(to: &b)
        var result = Agreement(count: count)
        var differences: [Double] = []
        a.withUnsafeMutableBytes { pa in
            b.withUnsafeMutableBytes { pb in
                var alphaChanged = 0
                for i in 0..<count {
                    let k = i * 4
                    if pa[k + 3] != Self.sample[k + 3] || pb[k + 3] != Self.sample[k + 3] { alphaChanged += 1 }
                    if pa[k] == pb[k] && pa[k + 1] == pb[k + 1] && pa[k + 2] == pb[k + 2] {
                        result.identical += 1
                        continue
                    }
                    differences.append(CIEDE2000.difference(ColorDifference.lab(pa[k], pa[k + 1], pa[k + 2]),
                                                            ColorDifference.lab(pb[k], pb[k + 1], pb[k + 2])))
                }
                XCTAssertEqual(alphaChanged, 0, "alpha is never touched", file: file, line: line)
            }
        }
        differences.sort()
        result.max = differences.last ?? 0
        result.mean = differences.reduce(0, +) / Double(count)
        let p99Index = Int(Double(count) * 0.99)  // among all pixels; identical ones sort first with ΔE 0
        let firstDifferent = count - differences.count
        result.p99 = p99Index >= firstDifferent ? differences[min(differences.count - 1, p99Index - firstDifferent)] : 0
        return result
    }

    private func data(_ path: String) throws -> Data {
        try ColorTestSupport.require(tools: [], files: [path])
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func testStandardRGBProfilesToSRGBMatchLittleCMS() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB])
        for path in Self.standardProfiles {
            guard FileManager.default.fileExists(atPath: path) else {
                print("matrix-shaper: \(path) not installed, skipped")
                continue
            }
            let profile = try data(path)
            let (fast, lcms) = MatrixShaperTransform.comparison(source: profile, target: nil)
            guard let fast, let lcms else { XCTFail("\(path): no fast path (or lcms refused)"); continue }
            let stats = try agreement(fast, lcms)
            print("matrix-shaper \((path as NSString).lastPathComponent) → sRGB: \(stats)")
            XCTAssertLessThanOrEqual(stats.max, 0.5, path)
        }
    }

    /// `.target` to another matrix-shaper profile: sRGB → Display P3 and ProPhoto → Adobe RGB.
    func testMatrixShaperTargetsMatchLittleCMS() throws {
        let pairs = [("/usr/share/color/icc/sRGB.icc", ColorTestSupport.displayP3),
                     ("/usr/share/color/argyll/ref/ProPhoto.icm", ColorTestSupport.adobeRGB),
                     (ColorTestSupport.displayP3, "/usr/share/color/argyll/ref/Rec2020.icm")]
        for (source, target) in pairs {
            let (fast, lcms) = MatrixShaperTransform.comparison(source: try data(source), target: try data(target))
            guard let fast, let lcms else { XCTFail("\(source) → \(target): no fast path"); continue }
            let stats = try agreement(fast, lcms)
            print("matrix-shaper \((source as NSString).lastPathComponent) → \((target as NSString).lastPathComponent): \(stats)")
            XCTAssertLessThanOrEqual(stats.max, 0.5, "\(source) → \(target)")
        }
    }

    /// Every RGB profile embedded in the corpus's colour files: the fast path where it applies, within 0.5.
    func testEveryCorpusRGBProfileMatchesLittleCMS() throws {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let root = dir.appendingPathComponent("color")
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            throw XCTSkip("no color folder in the corpus")
        }
        var profiles: [(String, Data)] = []
        for case let url as URL in walker where !url.hasDirectoryPath {
            guard ["jpg", "jpeg", "png", "webp", "avif", "heic", "jxl"].contains(url.pathExtension.lowercased()),
                  let bytes = try? Data(contentsOf: url) else { continue }
            var found: [Data] = []
            // The decoder's reassembled profile (JPEG chunks, PNG iCCP), and any profile stored whole (AVIF/HEIF colr).
            if let icc = try? ImageDecoder.decode(bytes, options: DecodeOptions(maxPixelSize: 16, colorManagement: .preserve))
                .colorSpace?.iccProfile {
                found.append(icc)
            }
            found += Self.embeddedProfiles(in: bytes)
            for icc in found where !profiles.contains(where: { $0.1 == icc }) {
                profiles.append((url.lastPathComponent, icc))
            }
        }
        XCTAssertGreaterThanOrEqual(profiles.count, 5, "the corpus's colour files carry profiles")
        var fastCount = 0
        for (name, icc) in profiles {
            let (fast, lcms) = MatrixShaperTransform.comparison(source: icc, target: nil)
            guard let lcms else { continue }  // not RGB, or refused: not this test's business
            guard let fast else {
                print("matrix-shaper: \(name)'s profile keeps Little CMS (not a plain matrix-shaper)")
                continue
            }
            fastCount += 1
            let stats = try agreement(fast, lcms)
            print("matrix-shaper \(name) → sRGB: \(stats)")
            XCTAssertLessThanOrEqual(stats.max, 0.5, name)
        }
        XCTAssertGreaterThanOrEqual(fastCount, 3, "Display P3, A98 and the wide-gamut AVIF take the fast path")
    }

    /// Profiles whose lcms transform is not a plain matrix-shaper keep Little CMS: a LUT-based profile (the
    /// corpus's Lab-PCS "TIFF RGB"), grey and CMYK layouts, and 16-bit pixels.
    func testOtherProfilesKeepLittleCMS() throws {
        let p3 = try data(ColorTestSupport.displayP3)
        let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: p3), layout: .rgba, management: .sRGB,
                                   cache: ColorTransformCache())
        XCTAssertEqual(plan.transform?.isMatrixShaper, true, "Display P3 → sRGB takes the fast path")
        let deep = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: p3), layout: .rgba16, management: .sRGB,
                                   cache: ColorTransformCache())
        XCTAssertEqual(deep.transform?.isMatrixShaper, false, "16-bit pixels keep Little CMS")
        let cmykFile = try ColorTestSupport.corpusFile("jpeg/thumbor_cmyk-icc.jpg")
        let cmyk = try XCTUnwrap(try ImageDecoder.decode(Data(contentsOf: cmykFile),
                                                          options: DecodeOptions(maxPixelSize: 16, colorManagement: .preserve))
            .colorSpace?.iccProfile)
        XCTAssertNil(MatrixShaperTransform.comparison(source: cmyk, target: nil).fast, "CMYK keeps Little CMS")
        let grey = try data("/usr/share/color/icc/Gray.icc")
        let greyPlan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: grey), layout: .greyInRGBA, management: .sRGB,
                                       cache: ColorTransformCache())
        XCTAssertEqual(greyPlan.transform?.isMatrixShaper ?? false, false, "grey keeps Little CMS")
        let lut = try ImageDecoder.decode(Data(contentsOf: ColorTestSupport.corpusFile("jpeg/pillow_icc_profile_big.jpg")),
                                          options: DecodeOptions(maxPixelSize: 16, colorManagement: .preserve))
        let lutProfile = try XCTUnwrap(lut.colorSpace?.iccProfile)
        let (fast, lcms) = MatrixShaperTransform.comparison(source: lutProfile, target: nil)
        XCTAssertNotNil(lcms, "lcms converts the LUT profile")
        XCTAssertNil(fast, "a Lab-PCS LUT profile is not a matrix-shaper")
    }

    /// Whole ICC profiles stored as they are in `bytes` (found by their `acsp` signature and declared size).
    static func embeddedProfiles(in bytes: Data) -> [Data] {
        let raw = [UInt8](bytes)
        var result: [Data] = []
        var i = 36
        while i + 4 <= raw.count {
            if raw[i] == 0x61, raw[i + 1] == 0x63, raw[i + 2] == 0x73, raw[i + 3] == 0x70 {
                let start = i - 36
                let size = Int(raw[start]) << 24 | Int(raw[start + 1]) << 16 | Int(raw[start + 2]) << 8 | Int(raw[start + 3])
                if size >= 132, start + size <= raw.count { result.append(Data(raw[start..<start + size])) }
            }
            i += 1
        }
        return result
    }
}
