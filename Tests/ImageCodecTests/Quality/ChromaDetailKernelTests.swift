@testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// `ChromaDetail.subsampled` (C since 2026-11-29: `wi_chroma_420_roundtrip`) against the Swift loop it replaced,
/// kept here as the model: byte for byte on seeded random images of every small size (odd widths and heights
/// make the last chroma block 1 pixel wide or tall), straight and premultiplied pixels (with colours above their
/// alpha, which `PixelBuffer(bytes:)` accepts), padded rows with garbage in the padding, and the corpus photos.
/// Any change in the arithmetic or its order moves a byte somewhere in these. The seed is printed on failure.
final class ChromaDetailKernelTests: XCTestCase {
    private let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_KERNEL_SEED"] ?? "") ?? 0xC4_2026

    /// The Swift implementation of 2026-11-28 (AutomaticQuality's 4:2:0 ceiling), unchanged but for its name.
    static func model(_ buffer: PixelBuffer) throws -> PixelBuffer {
        let w = buffer.width, h = buffer.height
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var cb = [Float](repeating: 0, count: cw * ch), cr = cb
        var counts = [Float](repeating: 0, count: cw * ch)
        var out = try PixelBuffer(width: w, height: h, pixelFormat: buffer.pixelFormat)
        let outStride = out.bytesPerRow
        buffer.withUnsafeBytes { src in
            for y in 0..<h {
                for x in 0..<w {
                    let p = y * buffer.bytesPerRow + x * 4
                    let r = Float(src[p]), g = Float(src[p + 1]), b = Float(src[p + 2])
                    let i = (y / 2) * cw + x / 2
                    cb[i] += -0.168736 * r - 0.331264 * g + 0.5 * b
                    cr[i] += 0.5 * r - 0.418688 * g - 0.081312 * b
                    counts[i] += 1
                }
            }
            for i in 0..<(cw * ch) {
                cb[i] /= counts[i]
                cr[i] /= counts[i]
            }
            func sample(_ plane: [Float], _ x: Int, _ y: Int) -> Float {
                let i = x / 2, j = y / 2
                let ni = min(cw - 1, max(0, x % 2 == 0 ? i - 1 : i + 1))
                let nj = min(ch - 1, max(0, y % 2 == 0 ? j - 1 : j + 1))
                let a = plane[j * cw + i] * 0.75 + plane[j * cw + ni] * 0.25
                let b = plane[nj * cw + i] * 0.75 + plane[nj * cw + ni] * 0.25
                return a * 0.75 + b * 0.25
            }
            out.withUnsafeMutableBytes { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        let p = y * buffer.bytesPerRow + x * 4
                        let q = y * outStride + x * 4
                        let r = Float(src[p]), g = Float(src[p + 1]), b = Float(src[p + 2])
                        let luma = 0.299 * r + 0.587 * g + 0.114 * b
                        let u = sample(cb, x, y), v = sample(cr, x, y)
                        func byte(_ value: Float) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
                        var rr = luma + 1.402 * v, gg = luma - 0.344136 * u - 0.714136 * v, bb = luma + 1.772 * u
                        if buffer.pixelFormat == .rgba8Premultiplied {
                            let a = Float(src[p + 3])
                            (rr, gg, bb) = (min(rr, a), min(gg, a), min(bb, a))
                        }
                        dst[q] = byte(rr)
                        dst[q + 1] = byte(gg)
                        dst[q + 2] = byte(bb)
                        dst[q + 3] = src[p + 3]
                    }
                }
            }
        }
        return out
    }

    /// The visible bytes of `buffer` (its rows without padding).
    private func pixels(_ buffer: PixelBuffer) -> [UInt8] {
        buffer.withUnsafeBytes { bytes in
            (0..<buffer.height).flatMap { y in Array(bytes[(y * buffer.bytesPerRow)..<(y * buffer.bytesPerRow + buffer.width * 4)]) }
        }
    }

    /// Fails with the first differing byte (not two arrays of 360,000 numbers).
    private func assertSame(_ expected: [UInt8], _ actual: [UInt8], _ what: String, line: UInt = #line) {
        guard expected != actual else { return }
        let at = expected.indices.first { $0 >= actual.count || expected[$0] != actual[$0] } ?? actual.count
        XCTFail("seed \(seed): \(what): first difference at byte \(at) of \(expected.count)", line: line)
    }

    /// A random image; `stride` padding bytes a row filled with garbage; premultiplied colours kept within alpha
    /// unless `invalid`.
    private func image(_ w: Int, _ h: Int, _ format: PixelBuffer.PixelFormat, padding: Int, invalid: Bool,
                       _ random: inout SplitMix64) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: w, height: h, pixelFormat: format, bytesPerRow: w * 4 + padding)
        // Smooth areas and edges both: a random walk with occasional jumps, per channel.
        var level: [Int] = (0..<4).map { _ in Int.random(in: 0...255, using: &random) }
        let stride = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { bytes in
            for i in 0..<bytes.count { bytes[i] = UInt8.random(in: 0...255, using: &random) }
            for y in 0..<h {
                for x in 0..<w {
                    for c in 0..<4 {
                        level[c] = Int.random(in: 0..<8, using: &random) == 0
                            ? Int.random(in: 0...255, using: &random)
                            : min(255, max(0, level[c] + Int.random(in: -6...6, using: &random)))
                    }
                    let p = y * stride + x * 4
                    let alpha = Int.random(in: 0..<3, using: &random) == 0 ? 255 : level[3]
                    bytes[p + 3] = UInt8(alpha)
                    for c in 0..<3 {
                        let value = format == .rgba8Premultiplied && !invalid ? level[c] * alpha / 255 : level[c]
                        bytes[p + c] = UInt8(value)
                    }
                }
            }
        }
        return buffer
    }

    func testEqualsTheSwiftLoopByteForByteOnEverySmallSize() throws {
        var random = SplitMix64(seed: seed)
        var compared = 0
        for h in 1...11 {
            for w in 1...19 {
                for format in [PixelBuffer.PixelFormat.rgba8, .rgba8Premultiplied] {
                    for (padding, invalid) in [(0, false), (12, true)] {
                        let source = try image(w, h, format, padding: padding, invalid: invalid, &random)
                        let expected = pixels(try Self.model(source)), actual = pixels(try ChromaDetail.subsampled(source))
                        compared += 1
                        guard expected == actual else {
                            return assertSame(expected, actual, "\(w)×\(h) \(format) padding \(padding)")
                        }
                    }
                }
            }
        }
        XCTAssertEqual(compared, 11 * 19 * 4)
    }

    func testEqualsTheSwiftLoopOnLargeAndOddSizes() throws {
        var random = SplitMix64(seed: seed &+ 1)
        for (w, h) in [(400, 300), (401, 301), (1, 513), (513, 1), (333, 2)] {
            let source = try image(w, h, .rgba8Premultiplied, padding: 4, invalid: false, &random)
            assertSame(pixels(try Self.model(source)), pixels(try ChromaDetail.subsampled(source)), "\(w)×\(h)")
        }
    }

    /// On real photographs and graphics (every third file of the corpus at 300 px, as automatic quality sees them;
    /// all 67 took 21 s in a debug build, most of it the Swift model).
    func testEqualsTheSwiftLoopOnTheCorpus() throws {
        let files = try QualityCorpus.photos().enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        for file in files {
            let source = try QualityCorpus.thumbnail(file, maxPixelSize: 300)
            assertSame(pixels(try Self.model(source)), pixels(try ChromaDetail.subsampled(source)), file.lastPathComponent)
        }
        XCTAssertGreaterThan(files.count, 15)
    }

    /// What the function is for: a grey image loses nothing, red/blue stripes one pixel wide lose their colour.
    func testGreyIsUntouchedAndOnePixelColourStripesAreAveraged() throws {
        var stripes = try PixelBuffer(width: 8, height: 4, pixelFormat: .rgba8)
        let stride = stripes.bytesPerRow
        stripes.withUnsafeMutableBytes { bytes in
            for y in 0..<4 { for x in 0..<8 {
                let p = y * stride + x * 4
                (bytes[p], bytes[p + 1], bytes[p + 2], bytes[p + 3]) = x % 2 == 0 ? (255, 0, 0, 255) : (0, 0, 255, 255)
            } }
        }
        let out = try ChromaDetail.subsampled(stripes)
        let red = out.pixel(x: 2, y: 1), blue = out.pixel(x: 3, y: 1)
        XCTAssertLessThan(red.r, 200, "a red stripe keeps its colour through 4:2:0: \(red)")
        XCTAssertGreaterThan(red.b, 50, "\(red)")
        XCTAssertGreaterThan(blue.r, 50, "\(blue)")
        var grey = try PixelBuffer(width: 5, height: 3, pixelFormat: .rgba8)
        grey.withUnsafeMutableBytes { bytes in for i in 0..<bytes.count { bytes[i] = i % 4 == 3 ? 255 : 77 } }
        XCTAssertEqual(pixels(try ChromaDetail.subsampled(grey)), pixels(grey))
    }
}
