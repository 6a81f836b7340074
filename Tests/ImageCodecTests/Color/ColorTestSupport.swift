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

    /// Mean, 95th percentile and maximum ΔE00 of two images of one size.
    struct Stats: CustomStringConvertible {
        var mean: Double
        var p95: Double
        var max: Double
        var description: String { String(format: "ΔE00 mean %.3f p95 %.3f max %.3f", mean, p95, max) }
    }

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
        let pa = a.converted(to: .rgba8).packedBytes
        let pb = b.converted(to: .rgba8).packedBytes
        var values: [Double] = []
        values.reserveCapacity(a.width * a.height)
        var i = 0
        while i < pa.count {
            if !(pa[i + 3] == 0 && pb[i + 3] == 0) {
                values.append(CIEDE2000.difference(lab(pa[i], pa[i + 1], pa[i + 2]), lab(pb[i], pb[i + 1], pb[i + 2])))
            }
            i += 4
        }
        guard !values.isEmpty else { return Stats(mean: 0, p95: 0, max: 0) }
        values.sort()
        let mean = values.reduce(0, +) / Double(values.count)
        let p95 = values[min(values.count - 1, Int(Double(values.count) * 0.95))]
        return Stats(mean: mean, p95: p95, max: values.last!)
    }

    /// CIE L*a*b* (D65 white) of an sRGB pixel.
    static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (Double, Double, Double) {
        func lin(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (rl, gl, bl) = (lin(r), lin(g), lin(b))
        let x = (0.4124564 * rl + 0.3575761 * gl + 0.1804375 * bl) / 0.95047
        let y = 0.2126729 * rl + 0.7151522 * gl + 0.0721750 * bl
        let z = (0.0193339 * rl + 0.1191920 * gl + 0.9503041 * bl) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
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

/// CIEDE2000 colour difference (Sharma, Wu, Dalal 2005), with kL = kC = kH = 1.
enum CIEDE2000 {
    static func difference(_ lab1: (Double, Double, Double), _ lab2: (Double, Double, Double)) -> Double {
        let (l1, a1, b1) = lab1
        let (l2, a2, b2) = lab2
        let c1 = (a1 * a1 + b1 * b1).squareRoot(), c2 = (a2 * a2 + b2 * b2).squareRoot()
        let cBar = (c1 + c2) / 2
        let c7 = pow(cBar, 7)
        let g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
        let a1p = (1 + g) * a1, a2p = (1 + g) * a2
        let c1p = (a1p * a1p + b1 * b1).squareRoot(), c2p = (a2p * a2p + b2 * b2).squareRoot()
        func hue(_ b: Double, _ a: Double) -> Double {
            if a == 0 && b == 0 { return 0 }
            let h = atan2(b, a) * 180 / .pi
            return h < 0 ? h + 360 : h
        }
        let h1p = hue(b1, a1p), h2p = hue(b2, a2p)
        let dLp = l2 - l1
        let dCp = c2p - c1p
        var dhp = 0.0
        if c1p * c2p != 0 {
            dhp = h2p - h1p
            if dhp > 180 { dhp -= 360 } else if dhp < -180 { dhp += 360 }
        }
        let dHp = 2 * (c1p * c2p).squareRoot() * sin(dhp * .pi / 360)
        let lBarp = (l1 + l2) / 2
        let cBarp = (c1p + c2p) / 2
        var hBarp = h1p + h2p
        if c1p * c2p != 0 {
            if abs(h1p - h2p) <= 180 { hBarp = (h1p + h2p) / 2 } else if h1p + h2p < 360 { hBarp = (h1p + h2p + 360) / 2 } else {
                hBarp = (h1p + h2p - 360) / 2
            }
        }
        let rad = Double.pi / 180
        let t = 1 - 0.17 * cos((hBarp - 30) * rad) + 0.24 * cos(2 * hBarp * rad) + 0.32 * cos((3 * hBarp + 6) * rad)
            - 0.20 * cos((4 * hBarp - 63) * rad)
        let dTheta = 30 * exp(-pow((hBarp - 275) / 25, 2))
        let cBarp7 = pow(cBarp, 7)
        let rc = 2 * (cBarp7 / (cBarp7 + pow(25, 7))).squareRoot()
        let lm = (lBarp - 50) * (lBarp - 50)
        let sl = 1 + 0.015 * lm / (20 + lm).squareRoot()
        let sc = 1 + 0.045 * cBarp
        let sh = 1 + 0.015 * cBarp * t
        let rt = -sin(2 * dTheta * rad) * rc
        let x = dLp / sl, y = dCp / sc, z = dHp / sh
        return (x * x + y * y + z * z + rt * y * z).squareRoot()
    }
}
