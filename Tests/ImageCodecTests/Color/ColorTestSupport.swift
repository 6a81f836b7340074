import Foundation
import ImageCodec
import TestSupport
import XCTest

/// CIEDE2000 over whole images and the independent references the colour tests compare with: Little CMS
/// through `jpgicc` (JPEG) and ImageMagick's `-profile` (PNG, WebP), made in the test from the same file.
enum ColorTestSupport {
    /// Debian's sRGB profile (icc-profiles-free), the reference tools' output profile.
    static let srgbProfile = "/usr/share/color/icc/sRGB.icc"
    static let displayP3 = "/usr/share/color/argyll/ref/DisplayP3.icm"
    static let adobeRGB = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
    static let swappedRedGreen = "/usr/share/color/icc/colord/SwappedRedAndGreen.icc"

    typealias Stats = ColorDifference.Stats

    /// The colour file `name` of the corpus (`color/<name>`), or a skip.
    static func corpusFile(_ name: String) throws -> URL {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let url = dir.appendingPathComponent("color").appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("corpus file color/\(name) missing") }
        return url
    }

    /// Skips unless every tool and file is there.
    static func require(tools: [String], files: [String] = []) throws {
        for tool in tools where ReferenceDecoder.path(of: tool) == nil {
            throw XCTSkip("\(tool) is not installed (make test-deps)")
        }
        for file in files where !FileManager.default.fileExists(atPath: file) {
            throw XCTSkip("\(file) missing (make test-deps installs icc-profiles-free, colord-data, argyll-ref)")
        }
    }

    /// A scratch folder for one test.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-colour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Decodes straight RGBA (no premultiplication, so ΔE sees the colours).
    static func decode(_ data: Data, _ management: ColorManagement = .sRGB, maxPixelSize: Int? = nil) throws -> Image {
        try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, maxPixelSize: maxPixelSize,
                                                             colorManagement: management))
    }

    /// The reference sRGB rendering of a JPEG by `jpgicc -t1 -b` (relative colorimetric, BPC; Little CMS),
    /// re-encoded at quality 100 without chroma subsampling, decoded untouched.
    static func jpgiccReference(_ file: URL, maxPixelSize: Int? = nil) throws -> Image {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("ref.jpg")
        _ = try ReferenceDecoder.run("jpgicc", ["-t1", "-b", "-q100", "-o\(srgbProfile)", file.path, out.path])
        return try decode(Data(contentsOf: out), .preserve, maxPixelSize: maxPixelSize)
    }

    /// The reference sRGB rendering by ImageMagick (`-intent relative -black-point-compensation -profile
    /// sRGB.icc`, through its Little CMS delegate), as a PNG decoded untouched.
    static func magickReference(_ file: URL) throws -> Image {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("ref.png")
        _ = try ReferenceDecoder.run("convert", [file.path, "-intent", "relative", "-black-point-compensation",
                                                 "-profile", srgbProfile, "-depth", "8", "PNG32:" + out.path])
        return try decode(Data(contentsOf: out), .preserve)
    }

    /// ΔE00 statistics over every pixel of two same-size images (pixels transparent in both are skipped).
    static func compare(_ a: PixelBuffer, _ b: PixelBuffer, file: StaticString = #filePath, line: UInt = #line) -> Stats? {
        guard a.width == b.width, a.height == b.height else {
            XCTFail("sizes differ: \(a.width)×\(a.height) vs \(b.width)×\(b.height)", file: file, line: line)
            return nil
        }
        return ColorDifference.stats(a, b)
    }

    /// A test chart: hue ramps, greys and saturated patches, `size` × `size`, opaque.
    static func chart(size: Int = 64) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: size, height: size, pixelFormat: .rgba8)
        for y in 0..<size {
            for x in 0..<size {
                let t = Double(x) / Double(size - 1)
                let band = y * 6 / size
                let v = UInt8((t * 255).rounded())
                let pixel: RGBA
                switch band {
                case 0: pixel = RGBA(r: v, g: 0, b: 0)
                case 1: pixel = RGBA(r: 0, g: v, b: 0)
                case 2: pixel = RGBA(r: 0, g: 0, b: v)
                case 3: pixel = RGBA(r: v, g: v, b: v)
                case 4: pixel = RGBA(r: 255 - v / 2, g: v, b: 128)
                default: pixel = RGBA(r: 200, g: UInt8(40 + Int(v) / 2), b: 255 - v)
                }
                buffer.setPixel(x: x, y: y, to: pixel)
            }
        }
        return buffer
    }
}

