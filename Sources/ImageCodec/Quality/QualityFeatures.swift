import Foundation

/// Cheap statistics of an image that predict how hard it is to compress: automatic quality's predictor
/// (`QualityModel`) picks a quality from them before any encode. One pass over the pixels in YCbCr (BT.601, as
/// JPEG's), eight pixels a step.
///
/// Which ones predict was measured on the shared corpus (`scripts/quality/fit_quality_model.py`, fed by the
/// benchmark suite `quality-fit`): luma gradient energy (detail, the main factor), the flat-area fraction (flat
/// areas show blocking and banding first), strong-edge fraction (text, line art), chroma gradient energy and
/// what 4:2:0 drops (chroma detail within 2×2 blocks: predicts the 4:2:0 ceiling).
///
/// - Important: A value type; thread-safe. Exposed to the benchmark only (`@_spi(QualityModel)`).
@_spi(QualityModel)
public struct QualityFeatures: Sendable, Equatable {
    /// Mean absolute luma difference to the left and upper neighbours, summed (0…510).
    public var lumaGradient: Double
    /// The same for Cb and Cr, summed over both.
    public var chromaGradient: Double
    /// The fraction of pixels whose luma gradient is under 2 (flat).
    public var flatFraction: Double
    /// The fraction of pixels whose luma gradient is over 48 (strong edges: text, line art).
    public var edgeFraction: Double
    /// The root mean square of Cb and Cr around their 2×2 block means: the chroma detail 4:2:0 drops.
    public var chromaLoss: Double
    /// Width × height.
    public var pixelCount: Int

    /// The features of `buffer`'s colour (alpha ignored: callers pass the pixels the encoder sees).
    ///
    /// Images at least `sampledMinimumHeight` tall take their gradients from odd rows only (row 2k + 1 against
    /// its left neighbour and row 2k) and their 2×2 blocks from every row pair: the same statistics on half the
    /// gradients, for two thirds of the pass's time. (One row pair in four was faster still, but flipped JPEG's
    /// predicted subsampling on a corpus graphic and left it 31 points under the target.) Smaller images use
    /// every row.
    public init(_ buffer: PixelBuffer) {
        self.init(buffer, samplesRows: buffer.height >= Self.sampledMinimumHeight)
    }

    /// The features with gradients from odd rows only (`samplesRows`) or from every row.
    init(_ buffer: PixelBuffer, samplesRows: Bool) {
        let w = buffer.width, h = buffer.height
        var sums = Sums()
        if w > 0, h > 0 {
            // Two rows of planar Y, Cb, Cr (previous, current), with slack for the vector loads.
            var planes = [Float](repeating: 0, count: 6 * w + 16)
            buffer.withUnsafeBytes { bytes in
                planes.withUnsafeMutableBufferPointer { planes in
                    let rows = Rows(bytes: bytes.baseAddress!, width: w, stride: buffer.bytesPerRow, planes: planes.baseAddress!)
                    if samplesRows, h >= 2 { rows.accumulateSampled(height: h, into: &sums) } else {
                        rows.accumulate(height: h, into: &sums)
                    }
                }
            }
        }
        let n = Double(max(sums.pairs, 1))
        lumaGradient = sums.luma / n
        chromaGradient = sums.chroma / n
        flatFraction = Double(sums.flat) / n
        edgeFraction = Double(sums.edges) / n
        // Blocks at an odd edge count a repeated pixel; close enough for a predictor.
        chromaLoss = (sums.loss / Double(max(sums.blockPixels, 1))).squareRoot()
        pixelCount = w * h
    }

    /// From this height on, the pass takes gradients from odd rows only: 64.
    static let sampledMinimumHeight = 64

    /// The pass's running totals.
    private struct Sums {
        var luma = 0.0, chroma = 0.0, loss = 0.0
        var flat = 0, edges = 0, pairs = 0, blockPixels = 0
    }

    /// The pass over an image's rows: each row to planar YCbCr (BT.601) in one of two row buffers, then per pixel
    /// the absolute differences to its left and upper neighbours (luma, and Cb + Cr) and the flat and edge counts,
    /// and per row pair the chroma energy around each 2×2 block's mean. Eight pixels a step (`SIMD8`; `SIMD16`'s
    /// even and odd halves for the blocks); per-row partial sums in Float, totals in Double.
    private struct Rows {
        typealias V = SIMD8<Float>
        let bytes: UnsafeRawPointer
        let width: Int
        let stride: Int
        let planes: UnsafeMutablePointer<Float>

        /// Every row: gradients of every pixel but the first, blocks on odd rows (and a last even row alone).
        func accumulate(height h: Int, into sums: inout Sums) {
            let w = width
            var previous = planes, current = planes + 3 * w
            for y in 0..<h {
                convert(row: y, into: current)
                // The first row has no upper neighbour: comparing it with itself adds exactly 0.
                gradients(of: current, above: y == 0 ? current : previous, firstRow: y == 0, into: &sums)
                if y % 2 == 1 || y == h - 1 {
                    blocks(top: y % 2 == 1 ? previous : current, bottom: current, rows: y % 2 == 1 ? 2 : 1, into: &sums)
                }
                swap(&previous, &current)
            }
        }

        /// Every row pair (2k, 2k + 1): the gradients of row 2k + 1 and the blocks of the pair (a last row alone
        /// is left out).
        func accumulateSampled(height h: Int, into sums: inout Sums) {
            let top = planes, bottom = planes + 3 * width
            var y = 0
            while y + 1 < h {
                convert(row: y, into: top)
                convert(row: y + 1, into: bottom)
                gradients(of: bottom, above: top, firstRow: false, into: &sums)
                blocks(top: top, bottom: bottom, rows: 2, into: &sums)
                y += 2
            }
        }

        private func convert(row y: Int, into plane: UnsafeMutablePointer<Float>) {
            let w = width
            let (cy, cb, cr) = (plane, plane + w, plane + 2 * w)
            let row = bytes + y * stride
            var x = 0
            #if _endian(little)
            // Eight RGBA pixels a step as little-endian words: R in the low byte (the same arithmetic per lane as
            // the scalar tail, so the values are identical). Big-endian machines take the scalar loop.
            let byte = SIMD8<UInt32>(repeating: 0xFF)
            while x + 8 <= w {
                let words = row.loadUnaligned(fromByteOffset: x * 4, as: SIMD8<UInt32>.self)
                let r = V(words & byte), g = V((words &>> 8) & byte), b = V((words &>> 16) & byte)
                let luma: V = 0.299 * r + 0.587 * g + 0.114 * b
                let blue: V = -0.168736 * r - 0.331264 * g + 0.5 * b
                let red: V = 0.5 * r - 0.418688 * g - 0.081312 * b
                UnsafeMutableRawPointer(cy + x).storeBytes(of: luma, as: V.self)
                UnsafeMutableRawPointer(cb + x).storeBytes(of: blue, as: V.self)
                UnsafeMutableRawPointer(cr + x).storeBytes(of: red, as: V.self)
                x += 8
            }
            #endif
            while x < w {
                let r = Float(row.load(fromByteOffset: x * 4, as: UInt8.self))
                let g = Float(row.load(fromByteOffset: x * 4 + 1, as: UInt8.self))
                let b = Float(row.load(fromByteOffset: x * 4 + 2, as: UInt8.self))
                cy[x] = 0.299 * r + 0.587 * g + 0.114 * b
                cb[x] = -0.168736 * r - 0.331264 * g + 0.5 * b
                cr[x] = 0.5 * r - 0.418688 * g - 0.081312 * b
                x += 1
            }
        }

        /// The gradients of every pixel of `current` against its left neighbour and `up` (the first pixel of the
        /// first row, with neither, is not counted).
        private func gradients(of current: UnsafeMutablePointer<Float>, above up: UnsafeMutablePointer<Float>,
                               firstRow: Bool, into sums: inout Sums) {
            let w = width
            let (cy, cb, cr) = (current, current + w, current + 2 * w)
            let (py, pb, pr) = (up, up + w, up + 2 * w)
            var rowLuma: Float = 0, rowChroma: Float = 0
            var flat = 0, edges = 0
            func pixel(_ x: Int) {
                var dy = abs(cy[x] - py[x]), dc = abs(cb[x] - pb[x]) + abs(cr[x] - pr[x])
                if x > 0 { dy += abs(cy[x] - cy[x - 1]); dc += abs(cb[x] - cb[x - 1]) + abs(cr[x] - cr[x - 1]) }
                rowLuma += dy
                rowChroma += dc
                if dy < 2 { flat += 1 } else if dy > 48 { edges += 1 }
            }
            if !firstRow { pixel(0) }
            var x = 1
            if w > 8 {
                var vLuma = V(), vChroma = V()
                var vFlat = SIMD8<Int32>(), vEdges = SIMD8<Int32>()
                func load(_ p: UnsafeMutablePointer<Float>) -> V { UnsafeRawPointer(p).loadUnaligned(as: V.self) }
                // A compare and select: `pointwiseMax(v, -v)` is an out-of-line call per vector.
                func magnitude(_ v: V) -> V { v.replacing(with: -v, where: v .< 0) }
                let zero = SIMD8<Int32>(), one = SIMD8<Int32>(repeating: 1)
                while x + 8 <= w {
                    let (y0, b0, r0): (V, V, V) = (load(cy + x), load(cb + x), load(cr + x))
                    let dy: V = magnitude(y0 - load(py + x)) + magnitude(y0 - load(cy + x - 1))
                    let upB = magnitude(b0 - load(pb + x)), leftB = magnitude(b0 - load(cb + x - 1))
                    let upR = magnitude(r0 - load(pr + x)), leftR = magnitude(r0 - load(cr + x - 1))
                    let dc: V = ((upB + leftB) + upR) + leftR
                    vLuma += dy
                    vChroma += dc
                    vFlat &+= zero.replacing(with: one, where: dy .< 2)
                    vEdges &+= zero.replacing(with: one, where: dy .> 48)
                    x += 8
                }
                rowLuma += vLuma.sum()
                rowChroma += vChroma.sum()
                flat += Int(vFlat.wrappedSum())
                edges += Int(vEdges.wrappedSum())
            }
            while x < w { pixel(x); x += 1 }
            sums.luma += Double(rowLuma)
            sums.chroma += Double(rowChroma)
            sums.flat += flat
            sums.edges += edges
            sums.pairs += firstRow ? w - 1 : w
        }

        /// The chroma energy of the 2×2 blocks of two rows (the same row twice for a last even row alone: `rows` 1,
        /// the pixels it covers).
        private func blocks(top: UnsafeMutablePointer<Float>, bottom: UnsafeMutablePointer<Float>, rows: Int,
                            into sums: inout Sums) {
            let w = width
            sums.loss += Double(QualityFeatures.blockChromaEnergy(top: top + w, bottom: bottom + w, width: w)
                                + QualityFeatures.blockChromaEnergy(top: top + 2 * w, bottom: bottom + 2 * w, width: w))
            sums.blockPixels += rows * w
        }
    }

    /// The sum over 2×2 blocks of one chroma plane's squared differences to the block's mean; a last odd column
    /// pairs with itself.
    fileprivate static func blockChromaEnergy(top: UnsafeMutablePointer<Float>, bottom: UnsafeMutablePointer<Float>,
                                          width w: Int) -> Float {
        func energy<V: SIMD>(_ a: V, _ b: V, _ c: V, _ d: V) -> V where V.Scalar == Float {
            let mean = (a + b + c + d) / 4
            let (ea, eb, ec, ed) = (a - mean, b - mean, c - mean, d - mean)
            return ea * ea + eb * eb + ec * ec + ed * ed
        }
        var total: Float = 0, x = 0
        if w >= 16 {
            var sum = SIMD8<Float>()
            while x + 16 <= w {
                let t = UnsafeRawPointer(top + x).loadUnaligned(as: SIMD16<Float>.self)
                let b = UnsafeRawPointer(bottom + x).loadUnaligned(as: SIMD16<Float>.self)
                sum += energy(t.evenHalf, t.oddHalf, b.evenHalf, b.oddHalf)
                x += 16
            }
            total = sum.sum()
        }
        while x < w {
            let x1 = min(x + 1, w - 1)
            total += energy(SIMD2(top[x], 0), SIMD2(top[x1], 0), SIMD2(bottom[x], 0), SIMD2(bottom[x1], 0))[0]
            x += 2
        }
        return total
    }

    /// These features with each one clamped to the range `QualityModel.fittedRanges` saw in its fit, so a linear
    /// model is not extrapolated past its data (a 1-bit dither's edge fraction of 0.78, where the corpus's ends at
    /// 0.34, predicted WebP quality 1, which scored 30 points under the target: `Review24PredictorTests`).
    func clampedToTheFit() -> QualityFeatures {
        let r = QualityModel.fittedRanges
        var f = self
        f.lumaGradient = min(r.lumaGradient.upperBound, max(r.lumaGradient.lowerBound, lumaGradient))
        f.chromaGradient = min(r.chromaGradient.upperBound, max(r.chromaGradient.lowerBound, chromaGradient))
        f.flatFraction = min(r.flatFraction.upperBound, max(r.flatFraction.lowerBound, flatFraction))
        f.edgeFraction = min(r.edgeFraction.upperBound, max(r.edgeFraction.lowerBound, edgeFraction))
        f.chromaLoss = min(r.chromaLoss.upperBound, max(r.chromaLoss.lowerBound, chromaLoss))
        return f
    }

    /// The predictor's inputs, in the order of `QualityModel`'s coefficients: 1, the target's offset from 70 in
    /// tens, its square, log(1 + luma gradient), flat fraction, edge fraction, log(1 + chroma gradient),
    /// log(1 + chroma loss), and the target offset times log(1 + luma gradient).
    func inputs(target: Double) -> [Double] {
        let t = (target - 70) / 10
        let lg = log(1 + lumaGradient)
        return [1, t, t * t, lg, flatFraction, edgeFraction, log(1 + chromaGradient), log(1 + chromaLoss),
                t * lg]
    }
}
