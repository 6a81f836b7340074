internal import CWebImageCodecShims
import Foundation

/// The per-pixel passes of SSIMULACRA2 on raw Float planes: sRGB to linear, 2×2 halving, positive XYB and the
/// Gaussian blur, and the sums of the SSIM and edge maps (`SSIMULACRA2.ssimAverages`, `.edgeAverages`). The loops
/// are C (`wi_ssimulacra2.c` in CWebImageCodecShims: plain loops the compiler vectorises, with an AVX2 clone on
/// x86-64): the same arithmetic in Swift ran 50–100× slower in a debug build, where SIMD8 values are generic calls,
/// and was most of the debug test suite's time (docs/quality.md, "The metric in C").
extension SSIMULACRA2 {
    enum Kernels {
        /// The blur's weights: σ 1.5, 11 taps (radius 5), normalised over them; `taps[5]` is the centre.
        static let taps: [Float] = {
            let sigma = 1.5, radius = 5
            let raw = (-radius...radius).map { exp(-0.5 * Double($0 * $0) / (sigma * sigma)) }
            let total = raw.reduce(0, +)
            return raw.map { Float($0 / total) }
        }()

        /// The Gaussian blur of the metric, of `a` (or of `a × b` when `b` is given, without making the product
        /// plane): zeros beyond the left and right edges, mirrored (`d c b a | a b c d`) at the top and bottom,
        /// as the PyPI port does (scipy's 11-tap `gaussian_filter`, truncate 3.33, on the image transposed with one
        /// axis zero-padded and the other reflected, so x gets the zeros). libjxl's own code uses a recursive
        /// Gaussian; the PyPI port is what this project checks against, so this is its FIR filter.
        ///
        /// `row` holds `width + 10` floats (the padded source row), `horizontal` and `out` `width × height`.
        static func blur(_ a: UnsafePointer<Float>, times b: UnsafePointer<Float>?, width w: Int, height h: Int,
                         row: UnsafeMutablePointer<Float>, horizontal: UnsafeMutablePointer<Float>,
                         into out: UnsafeMutablePointer<Float>) {
            taps.withUnsafeBufferPointer { k in
                wi_ss2_blur(a, b, w, h, k.baseAddress!, row, horizontal, out)
            }
        }

        /// sRGB 8-bit to linear RGB planes, composited on grey 0.5 (in the encoded values) where not opaque.
        static func linearize(_ buffer: PixelBuffer, into r: UnsafeMutablePointer<Float>, _ g: UnsafeMutablePointer<Float>,
                              _ b: UnsafeMutablePointer<Float>) {
            let premultiplied: Int32 = buffer.pixelFormat == .rgba8Premultiplied ? 1 : 0
            toLinear.withUnsafeBufferPointer { table in
                buffer.withUnsafeBytes { bytes in
                    wi_ss2_linearize(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.bytesPerRow,
                                     buffer.width, buffer.height, premultiplied, table.baseAddress!, r, g, b)
                }
            }
        }

        static let toLinear: [Float] = (0..<256).map { v in
            let c = Double(v) / 255
            return Float(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
        }

        /// Halves a `width × height` plane in place to `(width + 1) / 2 × (height + 1) / 2`, each pixel the mean
        /// of its (up to) 2×2 block. In place is safe: output pixel k is written after every read at or below
        /// index k and before any read above it (rows are at least as long as output rows).
        static func halve(_ plane: UnsafeMutablePointer<Float>, width: Int, height: Int) {
            wi_ss2_halve(plane, width, height)
        }

        /// The XYB planes made positive as the metric uses them: X × 14 + 0.42, Y + 0.01, B − Y + 0.55.
        static func positiveXYB(r: UnsafePointer<Float>, g: UnsafePointer<Float>, b: UnsafePointer<Float>, count n: Int,
                                x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>,
                                bMinusY: UnsafeMutablePointer<Float>) {
            wi_ss2_positive_xyb(r, g, b, n, x, y, bMinusY)
        }

        /// The cube root of `v ≥ 0` to Float precision (within 3 ulps of libm's), without a libm call (which does
        /// not vectorise and was a third of the metric's time): an exponent-thirding bit estimate (within 5 %), then
        /// two Halley steps (cubic convergence: 5e-2 → 1e-4 → Float rounding). 0 gives 0 (the metric adds a bias
        /// of 0.0038 before the root, so values near 0 do not occur).
        static func cbrt(_ v: Float) -> Float {
            wi_ss2_cbrt(v)
        }
    }
}
