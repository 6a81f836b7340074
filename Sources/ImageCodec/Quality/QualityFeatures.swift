import Foundation

/// Cheap statistics of an image that predict how hard it is to compress: automatic quality's predictor
/// (`QualityModel`) picks a quality from them before any encode. One pass over the pixels in YCbCr (BT.601, as
/// JPEG's), about 0.3 ms for 400×300 in a release build.
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
    public init(_ buffer: PixelBuffer) {
        let w = buffer.width, h = buffer.height, stride = buffer.bytesPerRow
        var previous = [SIMD3<Float>](repeating: .zero, count: w), current = previous
        var luma = 0.0, chroma = 0.0, loss = 0.0
        var flat = 0, edges = 0, pairs = 0
        buffer.withUnsafeBytes { bytes in
            for y in 0..<h {
                var rowLuma: Float = 0, rowChroma: Float = 0, rowLoss: Float = 0
                for x in 0..<w {
                    let p = y * stride + x * 4
                    let r = Float(bytes[p]), g = Float(bytes[p + 1]), b = Float(bytes[p + 2])
                    current[x] = SIMD3(0.299 * r + 0.587 * g + 0.114 * b,
                                       -0.168736 * r - 0.331264 * g + 0.5 * b,
                                       0.5 * r - 0.418688 * g - 0.081312 * b)
                }
                for x in 0..<w {
                    let c = current[x]
                    var d = SIMD3<Float>.zero
                    if x > 0 { d += Self.magnitude(c - current[x - 1]) }
                    if y > 0 { d += Self.magnitude(c - previous[x]) }
                    if x > 0 || y > 0 {
                        rowLuma += d.x
                        rowChroma += d.y + d.z
                        if d.x < 2 { flat += 1 } else if d.x > 48 { edges += 1 }
                        pairs += 1
                    }
                }
                // 2×2 blocks end on odd rows (and a last even row alone).
                if y % 2 == 1 || y == h - 1 {
                    let top = y % 2 == 1 ? previous : current
                    var x = 0
                    while x < w {
                        let x1 = min(x + 1, w - 1)
                        let (a, b, c, d) = (top[x], top[x1], current[x], current[x1])
                        let mean = (a + b + c + d) / 4
                        let (ea, eb, ec, ed) = (a - mean, b - mean, c - mean, d - mean)
                        let e2 = ea * ea + eb * eb + ec * ec + ed * ed
                        rowLoss += e2.y + e2.z
                        x += 2
                    }
                }
                luma += Double(rowLuma)
                chroma += Double(rowChroma)
                loss += Double(rowLoss)
                swap(&previous, &current)
            }
        }
        let n = Double(max(pairs, 1))
        lumaGradient = luma / n
        chromaGradient = chroma / n
        flatFraction = Double(flat) / n
        edgeFraction = Double(edges) / n
        // Blocks at an odd edge count a repeated pixel; close enough for a predictor.
        chromaLoss = (loss / Double(max(w * h, 1))).squareRoot()
        pixelCount = w * h
    }

    private static func magnitude(_ v: SIMD3<Float>) -> SIMD3<Float> { SIMD3(abs(v.x), abs(v.y), abs(v.z)) }

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
