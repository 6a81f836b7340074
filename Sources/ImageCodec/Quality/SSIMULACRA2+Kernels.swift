import Foundation

/// The per-pixel passes of SSIMULACRA2 on raw Float planes: sRGB to linear, 2×2 halving, positive XYB and the
/// Gaussian blur. Each inner loop is a plain loop over one row with no branches and fixed offsets, so the compiler
/// vectorises it (checked in a release build: `Benchmarks`, suite `quality`).
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
            let k = taps
            let (k0, k1, k2, k3, k4, k5) = (k[0], k[1], k[2], k[3], k[4], k[5])
            row.update(repeating: 0, count: 5)
            (row + 5 + w).update(repeating: 0, count: 5)
            for y in 0..<h {
                let src = a + y * w, dst = horizontal + y * w, p = row + 5
                if let b {
                    let other = b + y * w
                    for x in 0..<w { p[x] = src[x] * other[x] }
                } else {
                    p.update(from: src, count: w)
                }
                // Symmetric taps: one multiply per pair. p[x - 5 … x + 5] is row[x … x + 10].
                for x in 0..<w {
                    var s = k5 * row[x + 5]
                    s += k0 * (row[x] + row[x + 10])
                    s += k1 * (row[x + 1] + row[x + 9])
                    s += k2 * (row[x + 2] + row[x + 8])
                    s += k3 * (row[x + 3] + row[x + 7])
                    s += k4 * (row[x + 4] + row[x + 6])
                    dst[x] = s
                }
            }
            for y in 0..<h {
                func source(_ t: Int) -> UnsafePointer<Float> { UnsafePointer(horizontal + mirror(y - 5 + t, h) * w) }
                let (r0, r1, r2, r3, r4, r5) = (source(0), source(1), source(2), source(3), source(4), source(5))
                let (r6, r7, r8, r9, r10) = (source(6), source(7), source(8), source(9), source(10))
                let dst = out + y * w
                for x in 0..<w {
                    var s = k5 * r5[x]
                    s += k0 * (r0[x] + r10[x])
                    s += k1 * (r1[x] + r9[x])
                    s += k2 * (r2[x] + r8[x])
                    s += k3 * (r3[x] + r7[x])
                    s += k4 * (r4[x] + r6[x])
                    dst[x] = s
                }
            }
        }

        /// The index `i` mirrored into `0..<n` (half-sample symmetric, repeated for tiny `n`).
        static func mirror(_ i: Int, _ n: Int) -> Int {
            var i = i
            while i < 0 || i >= n { i = i < 0 ? -i - 1 : 2 * n - 1 - i }
            return i
        }

        /// sRGB 8-bit to linear RGB planes, composited on grey 0.5 (in the encoded values) where not opaque.
        static func linearize(_ buffer: PixelBuffer, into r: UnsafeMutablePointer<Float>, _ g: UnsafeMutablePointer<Float>,
                              _ b: UnsafeMutablePointer<Float>) {
            let w = buffer.width, h = buffer.height, stride = buffer.bytesPerRow
            let premultiplied = buffer.pixelFormat == .rgba8Premultiplied
            toLinear.withUnsafeBufferPointer { table in
                buffer.withUnsafeBytes { bytes in
                    for y in 0..<h {
                        let row = y * stride
                        for x in 0..<w {
                            let p = row + x * 4, i = y * w + x
                            let alpha = bytes[p + 3]
                            if alpha == 255 {
                                r[i] = table[Int(bytes[p])]
                                g[i] = table[Int(bytes[p + 1])]
                                b[i] = table[Int(bytes[p + 2])]
                                continue
                            }
                            let a = Float(alpha) / 255
                            var c = SIMD3<Float>(Float(bytes[p]), Float(bytes[p + 1]), Float(bytes[p + 2]))
                            c = (premultiplied ? c : c * a) + SIMD3(repeating: 127.5 * (1 - a))
                            r[i] = linear(c.x, table)
                            g[i] = linear(c.y, table)
                            b[i] = linear(c.z, table)
                        }
                    }
                }
            }
        }

        /// Exact for whole values (the table), interpolated between them (composited pixels).
        static func linear(_ v: Float, _ table: UnsafeBufferPointer<Float>) -> Float {
            let i = Int(v)
            if Float(i) == v { return table[i] }
            let f = v - Float(i)
            return table[i] * (1 - f) + table[min(i + 1, 255)] * f
        }

        static let toLinear: [Float] = (0..<256).map { v in
            let c = Double(v) / 255
            return Float(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
        }

        /// Halves a `width × height` plane in place to `(width + 1) / 2 × (height + 1) / 2`, each pixel the mean
        /// of its (up to) 2×2 block. In place is safe: output pixel k is written after every read at or below
        /// index k and before any read above it (rows are at least as long as output rows).
        static func halve(_ plane: UnsafeMutablePointer<Float>, width: Int, height: Int) {
            let w2 = (width + 1) / 2, h2 = (height + 1) / 2
            let evenWidth = width / 2
            for oy in 0..<h2 {
                let y0 = oy * 2, y1 = min(y0 + 1, height - 1)
                let top = plane + y0 * width, bottom = plane + y1 * width, dst = plane + oy * w2
                if y1 != y0 {
                    for ox in 0..<evenWidth {
                        dst[ox] = (top[2 * ox] + top[2 * ox + 1] + bottom[2 * ox] + bottom[2 * ox + 1]) / 4
                    }
                    if evenWidth < w2 { dst[evenWidth] = (top[width - 1] + bottom[width - 1]) / 2 }
                } else {
                    // A block cut by the edge averages the pixels it has.
                    for ox in 0..<evenWidth { dst[ox] = (top[2 * ox] + top[2 * ox + 1]) / 2 }
                    if evenWidth < w2 { dst[evenWidth] = top[width - 1] }
                }
            }
        }

        /// The XYB planes made positive as the metric uses them: X × 14 + 0.42, Y + 0.01, B − Y + 0.55.
        static func positiveXYB(r: UnsafePointer<Float>, g: UnsafePointer<Float>, b: UnsafePointer<Float>, count n: Int,
                                x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>,
                                bMinusY: UnsafeMutablePointer<Float>) {
            let bias: Float = 0.0037930732552754493
            let cbrtBias = Float(Foundation.cbrt(Double(bias)))
            for i in 0..<n {
                let rv = r[i], gv = g[i], bv = b[i]
                let m0 = max(0.30 * rv + 0.622 * gv + 0.078 * bv + bias, 0)
                let m1 = max(0.23 * rv + 0.692 * gv + 0.078 * bv + bias, 0)
                let m2 = max(0.24342268924547819 * rv + 0.20476744424496821 * gv + 0.5518098665095537 * bv + bias, 0)
                let l0 = cbrt(m0) - cbrtBias, l1 = cbrt(m1) - cbrtBias, l2 = cbrt(m2) - cbrtBias
                let xv = 0.5 * (l0 - l1), yv = 0.5 * (l0 + l1)
                x[i] = xv * 14 + 0.42
                y[i] = yv + 0.01
                bMinusY[i] = (l2 - yv) + 0.55
            }
        }

        /// The cube root of `v ≥ 0` to Float precision (within 3 ulps of libm's), without a libm call (which does
        /// not vectorise and was a third of the metric's time): an exponent-thirding bit estimate (within 5 %), then
        /// two Halley steps (cubic convergence: 5e-2 → 1e-4 → Float rounding). 0 gives 0 (the metric adds a bias
        /// of 0.0038 before the root, so values near 0 do not occur).
        @inline(__always)
        static func cbrt(_ v: Float) -> Float {
            var y = Float(bitPattern: v.bitPattern / 3 &+ 0x2A51_37A0)
            var y3 = y * y * y
            y = y * (y3 + 2 * v) / (2 * y3 + v)
            y3 = y * y * y
            y = y * (y3 + 2 * v) / (2 * y3 + v)
            return v > 0 ? y : 0
        }
    }
}
