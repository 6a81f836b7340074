@testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// The metric's C kernels (`wi_ssimulacra2.c`: eight lanes a step, then a scalar tail) against plain Swift
/// models written from the metric's definition, in Double, on seeded random planes of every width around the
/// vector step and heights down to 1 (the blur's mirror repeats on tiny planes). The seed is printed on failure.
final class SSIMULACRA2KernelTests: XCTestCase {
    private let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_KERNEL_SEED"] ?? "") ?? 0x5A5A_2026

    private func planes(_ count: Int, _ n: Int, _ random: inout SplitMix64, in range: ClosedRange<Float> = 0...1) -> [[Float]] {
        (0..<count).map { _ in (0..<n).map { _ in Float.random(in: range, using: &random) } }
    }

    /// The blur by its definition: 11 taps, zeros past the left and right edges, rows mirrored at the top and bottom.
    private func modelBlur(_ a: [Float], _ b: [Float]?, _ w: Int, _ h: Int) -> [Double] {
        let taps = SSIMULACRA2.Kernels.taps.map(Double.init)
        func mirror(_ i: Int) -> Int {
            var i = i
            while i < 0 || i >= h { i = i < 0 ? -i - 1 : 2 * h - 1 - i }
            return i
        }
        let source = (0..<(w * h)).map { i in Double(a[i]) * (b.map { Double($0[i]) } ?? 1) }
        var horizontal = [Double](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var s = 0.0
                for t in -5...5 where x + t >= 0 && x + t < w { s += taps[t + 5] * source[y * w + x + t] }
                horizontal[y * w + x] = s
            }
        }
        var out = [Double](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var s = 0.0
                for t in -5...5 { s += taps[t + 5] * horizontal[mirror(y + t) * w + x] }
                out[y * w + x] = s
            }
        }
        return out
    }

    func testBlurMatchesItsDefinition() {
        var random = SplitMix64(seed: seed)
        for (w, h) in [(1, 1), (3, 2), (7, 5), (8, 1), (9, 13), (15, 6), (16, 16), (17, 3), (23, 11), (33, 4)] {
            let p = planes(2, w * h, &random)
            for product in [false, true] {
                var out = [Float](repeating: .nan, count: w * h), horizontal = [Float](repeating: .nan, count: w * h)
                var row = [Float](repeating: .nan, count: w + 10)
                p[0].withUnsafeBufferPointer { a in
                    p[1].withUnsafeBufferPointer { b in
                        SSIMULACRA2.Kernels.blur(a.baseAddress!, times: product ? b.baseAddress! : nil, width: w, height: h,
                                                 row: &row, horizontal: &horizontal, into: &out)
                    }
                }
                let model = modelBlur(p[0], product ? p[1] : nil, w, h)
                for i in 0..<(w * h) where abs(Double(out[i]) - model[i]) > 1e-5 {
                    return XCTFail("seed \(seed): blur \(w)×\(h) product \(product) at \(i): \(out[i]) vs \(model[i])")
                }
            }
        }
    }

    func testPositiveXYBMatchesItsDefinition() {
        var random = SplitMix64(seed: seed &+ 1)
        for n in [1, 7, 8, 9, 16, 31, 100] {
            var p = planes(3, n, &random)
            p[0][0] = 0; p[1][0] = 0; p[2][0] = 0   // black: the bias keeps the roots positive
            var (x, y, bMinusY) = ([Float](repeating: .nan, count: n), [Float](repeating: .nan, count: n),
                                   [Float](repeating: .nan, count: n))
            p[0].withUnsafeBufferPointer { r in
                p[1].withUnsafeBufferPointer { g in
                    p[2].withUnsafeBufferPointer { b in
                        SSIMULACRA2.Kernels.positiveXYB(r: r.baseAddress!, g: g.baseAddress!, b: b.baseAddress!, count: n,
                                                        x: &x, y: &y, bMinusY: &bMinusY)
                    }
                }
            }
            let out = [x, y, bMinusY]
            let bias = 0.0037930732552754493, cbrtBias = Foundation.cbrt(bias)
            for i in 0..<n {
                let (r, g, b) = (Double(p[0][i]), Double(p[1][i]), Double(p[2][i]))
                let l0 = Foundation.cbrt(0.30 * r + 0.622 * g + 0.078 * b + bias) - cbrtBias
                let l1 = Foundation.cbrt(0.23 * r + 0.692 * g + 0.078 * b + bias) - cbrtBias
                let l2 = Foundation.cbrt(0.24342268924547819 * r + 0.20476744424496821 * g + 0.5518098665095537 * b + bias) - cbrtBias
                let expected = [0.5 * (l0 - l1) * 14 + 0.42, 0.5 * (l0 + l1) + 0.01, l2 - 0.5 * (l0 + l1) + 0.55]
                for c in 0..<3 where abs(Double(out[c][i]) - expected[c]) > 2e-6 {
                    return XCTFail("seed \(seed): XYB n \(n) channel \(c) at \(i): \(out[c][i]) vs \(expected[c])")
                }
            }
        }
    }

    func testMapSumsMatchTheirDefinitions() {
        var random = SplitMix64(seed: seed &+ 2)
        for (w, h) in [(1, 1), (5, 3), (8, 2), (9, 7), (17, 5), (40, 9)] {
            let n = w * h
            let image1 = SSIMULACRA2.Plane(width: w, height: h, values: planes(1, n, &random)[0])
            let mu1 = SSIMULACRA2.Plane(width: w, height: h, values: planes(1, n, &random)[0])
            let image2 = planes(1, n, &random)[0], mu2 = planes(1, n, &random)[0]
            // Variances at or above the squared means, as a blur of squares gives.
            let sigma11 = SSIMULACRA2.Plane(width: w, height: h, values: (0..<n).map { mu1.values[$0] * mu1.values[$0] + Float.random(in: 0...0.1, using: &random) })
            let sigma22 = (0..<n).map { mu2[$0] * mu2[$0] + Float.random(in: 0...0.1, using: &random) }
            let sigma12 = (0..<n).map { mu1.values[$0] * mu2[$0] + Float.random(in: -0.05...0.05, using: &random) }
            let ssim = SSIMULACRA2.ssimAverages(mu1: mu1, mu2: mu2, sigma11: sigma11, sigma22: sigma22, sigma12: sigma12)
            let edge = SSIMULACRA2.edgeAverages(image1: image1, mu1: mu1, image2: image2, mu2: mu2)
            var s = [0.0, 0.0], e = [0.0, 0.0, 0.0, 0.0]
            for i in 0..<n {
                let (a, b) = (Double(mu1.values[i]), Double(mu2[i]))
                let num = (1 - (a - b) * (a - b)) * (2 * (Double(sigma12[i]) - a * b) + 0.0009)
                let den = (Double(sigma11.values[i]) - a * a) + (Double(sigma22[i]) - b * b) + 0.0009
                let d = max(0, 1 - num / den)
                s[0] += d; s[1] += pow(d, 4)
                let ratio = (1 + abs(Double(image2[i]) - Double(mu2[i]))) / (1 + abs(Double(image1.values[i]) - Double(mu1.values[i]))) - 1
                e[0] += max(ratio, 0); e[1] += pow(max(ratio, 0), 4); e[2] += max(-ratio, 0); e[3] += pow(max(-ratio, 0), 4)
            }
            let expectedSSIM = [s[0] / Double(n), pow(s[1] / Double(n), 0.25)]
            let expectedEdge = [e[0] / Double(n), pow(e[1] / Double(n), 0.25), e[2] / Double(n), pow(e[3] / Double(n), 0.25)]
            for k in 0..<2 {
                XCTAssertEqual(ssim[k], expectedSSIM[k], accuracy: 1e-4 * max(1, abs(expectedSSIM[k])), "seed \(seed): SSIM \(w)×\(h) term \(k)")
            }
            for k in 0..<4 {
                XCTAssertEqual(edge[k], expectedEdge[k], accuracy: 1e-4 * max(1, abs(expectedEdge[k])), "seed \(seed): edge \(w)×\(h) term \(k)")
            }
        }
    }

    func testLinearizeCompositesOnGrey() throws {
        var random = SplitMix64(seed: seed &+ 3)
        for premultiplied in [false, true] {
            let (w, h) = (11, 3)
            var bytes = [UInt8](repeating: 0, count: w * h * 4)
            for i in 0..<(w * h) {
                let alpha = [0, 1, 128, 254, 255][Int.random(in: 0..<5, using: &random)]
                bytes[4 * i + 3] = UInt8(alpha)
                for c in 0..<3 {
                    let v = Int.random(in: 0...255, using: &random)
                    bytes[4 * i + c] = UInt8(premultiplied ? v * alpha / 255 : v)
                }
            }
            let buffer = try PixelBuffer(width: w, height: h, pixelFormat: premultiplied ? .rgba8Premultiplied : .rgba8,
                                         bytes: bytes)
            var r = [Float](repeating: .nan, count: w * h), g = r, b = r
            SSIMULACRA2.Kernels.linearize(buffer, into: &r, &g, &b)
            func linear(_ v: Double) -> Double {
                let c = v / 255
                return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
            }
            for i in 0..<(w * h) {
                let a = Double(bytes[4 * i + 3]) / 255
                for (c, plane) in [r, g, b].enumerated() {
                    let colour = Double(bytes[4 * i + c]) * (premultiplied ? 1 : a) + 127.5 * (1 - a)
                    // Between two codes the kernel interpolates the table: within the curve's bend over one code.
                    XCTAssertEqual(Double(plane[i]), linear(colour), accuracy: 2e-4,
                                   "seed \(seed): premultiplied \(premultiplied) pixel \(i) channel \(c)")
                }
            }
        }
    }
}
