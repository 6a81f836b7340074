internal import CWebImageCodecShims
import Foundation

/// SSIMULACRA2, the perceptual image metric of libjxl and Cloudinary: how close a distorted image looks to its
/// reference, from 100 (identical) down (90 visually lossless, 80 very high quality, 70 high, 50 medium, 30 low;
/// negative for extreme distortion).
///
/// The published algorithm, written here from its description: both images go to linear sRGB, then to the XYB
/// colour space at 6 scales (2×2 averaging in linear light between scales); at each scale and in each of the three
/// XYB channels, an SSIM map (means and variances under a Gaussian of σ 1.5) and two edge maps (artefacts: edges
/// the distorted image has and the reference has not; detail lost: the reverse) are averaged in the 1- and
/// 4-norms; the 108 averages are weighted and mapped to the score. Images under 8 pixels a side stop the
/// scales early. It agrees with the PyPI `ssimulacra2` package (the port this project checks against) within a
/// small tolerance (`SSIMULACRA2Tests`).
///
/// Why this metric and not Butteraugli (which Debian's libjxl 0.7 exports, `jxl/butteraugli.h`): SSIMULACRA2 was
/// fitted to subjective scores (Cloudinary's CID22) and predicts them better than Butteraugli's norms do in its
/// authors' published validation; it costs a few Gaussian blurs per channel and scale where Butteraugli runs a
/// far heavier multi-band model (several times slower per pixel); the terms it weighs at zero are skipped and the
/// reference's half is computed once (`SSIMULACRA2.Reference`), so a search's later tries cost less; and it
/// keeps `ImageCodec` free of libjxl, an optional module. The tests check automatic quality with Butteraugli,
/// the metric it does not optimise.
///
/// Alpha: pixels are composited on mid grey before scoring.
///
/// ```swift
/// let score = try SSIMULACRA2.score(reference: original, distorted: decodedJPEG)   // e.g. 78.4
/// ```
///
/// - Important: Stateless and thread-safe. O(pixels), in Float with vectorised C passes (`wi_ssimulacra2.c`):
///   about 2 ms for a 400×300 reference and 1.5 ms per later comparison in a release build (see docs/quality.md,
///   "Cost"); memory about 40 bytes per pixel of scratch (kept by a `Reference` for its later comparisons) plus the reference's planes.
public enum SSIMULACRA2 {
    /// The score of `distorted` against `reference` (same size).
    ///
    /// - Throws: `ImageProcessingError.invalidSize` when the sizes differ.
    public static func score(reference: PixelBuffer, distorted: PixelBuffer) throws -> Double {
        try Reference(reference).score(distorted)
    }

    /// A reference image prepared once for several comparisons (what automatic quality does: one resized source,
    /// a few candidate encodes): its XYB pyramid, blurred means and variances are kept.
    ///
    /// - Important: Immutable after `init`; `score(_:)` may be called from several threads at once.
    public final class Reference: Sendable {
        /// The reference's width.
        public let width: Int
        /// The reference's height.
        public let height: Int
        let scales: [ReferenceScale]
        /// Scratch planes for comparisons: the one that built the reference first, then any given back. A
        /// comparison takes one (or makes one when all are in use by other threads) and returns it.
        private let pool: Mutex<[Workspace]>

        /// At most this many workspaces are kept for reuse (more only while that many threads score at once).
        static let pooledWorkspaces = 2

        /// Prepares `buffer` (any size of at least 1×1; images under 8×8 score 100 when identical and have no
        /// scales to compare otherwise).
        public init(_ buffer: PixelBuffer) {
            width = buffer.width
            height = buffer.height
            let workspace = Workspace(width: width, height: height)
            workspace.load(buffer)
            var scales: [ReferenceScale] = []
            let count = SSIMULACRA2.scaleCount(width: width, height: height)
            var (w, h) = (width, height)
            for scale in 0..<count {
                let n = w * h
                workspace.makeXYB(count: n)
                var xyb: [Plane?] = [nil, nil, nil], mu: [Plane?] = [nil, nil, nil], sigma: [Plane?] = [nil, nil, nil]
                for c in 0..<3 {
                    let ssim = SSIMULACRA2.usesSSIM(channel: c, scale: scale, of: count)
                    guard ssim || SSIMULACRA2.usesEdges(channel: c, scale: scale, of: count) else { continue }
                    let plane = workspace.xyb[c]
                    xyb[c] = Plane(width: w, height: h, values: Array(UnsafeBufferPointer(start: plane, count: n)))
                    workspace.blur(plane, width: w, height: h, into: workspace.mu)
                    mu[c] = Plane(width: w, height: h, values: Array(UnsafeBufferPointer(start: workspace.mu, count: n)))
                    if ssim {
                        workspace.blur(plane, times: plane, width: w, height: h, into: workspace.sigma22)
                        sigma[c] = Plane(width: w, height: h,
                                         values: Array(UnsafeBufferPointer(start: workspace.sigma22, count: n)))
                    }
                }
                scales.append(ReferenceScale(width: w, height: h, xyb: xyb, mu: mu, sigma11: sigma))
                if scale < count - 1 {
                    workspace.halve(width: w, height: h)
                    (w, h) = ((w + 1) / 2, (h + 1) / 2)
                }
            }
            self.scales = scales
            pool = Mutex([workspace])
        }

        /// The score of `distorted` (the reference's size) against this reference.
        ///
        /// - Throws: `ImageProcessingError.invalidSize` when the sizes differ.
        public func score(_ distorted: PixelBuffer) throws -> Double {
            guard distorted.width == width, distorted.height == height else {
                throw ImageProcessingError.invalidSize(width: distorted.width, height: distorted.height)
            }
            let workspace = pool.withLock { $0.popLast() } ?? Workspace(width: width, height: height)
            defer {
                pool.withLock { if $0.count < Self.pooledWorkspaces { $0.append(workspace) } }
            }
            workspace.load(distorted)
            var averages: [ScaleAverages] = []
            for (index, reference) in scales.enumerated() {
                let (w, h) = (reference.width, reference.height)
                workspace.makeXYB(count: w * h)
                var scale = ScaleAverages()
                // Terms whose weights are all zero are skipped (at the full scale only X's and Y's edge maps
                // count): the score is the same, for a third of the blurs.
                for c in 0..<3 {
                    guard let mu1 = reference.mu[c], let image1 = reference.xyb[c] else { continue }
                    let image2 = workspace.xyb[c]
                    workspace.blur(image2, width: w, height: h, into: workspace.mu)
                    if let sigma11 = reference.sigma11[c] {
                        workspace.blur(image2, times: image2, width: w, height: h, into: workspace.sigma22)
                        image1.values.withUnsafeBufferPointer { i1 in
                            workspace.blur(i1.baseAddress!, times: image2, width: w, height: h, into: workspace.sigma12)
                        }
                        scale.ssim[c] = SSIMULACRA2.ssimAverages(mu1: mu1, mu2: workspace.mu, sigma11: sigma11,
                                                                 sigma22: workspace.sigma22, sigma12: workspace.sigma12)
                    }
                    if SSIMULACRA2.usesEdges(channel: c, scale: index, of: scales.count) {
                        scale.edge[c] = SSIMULACRA2.edgeAverages(image1: image1, mu1: mu1, image2: image2, mu2: workspace.mu)
                    }
                }
                averages.append(scale)
                if index < scales.count - 1 { workspace.halve(width: w, height: h) }
            }
            return SSIMULACRA2.finalScore(averages)
        }
    }

    static let maximumScales = 6

    /// How many scales an image of this size has: halvings (rounded up) while both sides are at least 8, at most 6.
    static func scaleCount(width: Int, height: Int) -> Int {
        var (w, h, count) = (width, height, 0)
        while count < maximumScales, w >= 8, h >= 8 {
            count += 1
            (w, h) = ((w + 1) / 2, (h + 1) / 2)
        }
        return count
    }

    /// One scale of a prepared reference: its positive XYB planes, their blurred means and blurred squares.
    struct ReferenceScale: Sendable {
        let width: Int
        let height: Int
        /// `nil` where neither term of that channel and scale has a weight.
        let xyb: [Plane?]
        /// `nil` where neither term of that channel and scale has a weight.
        let mu: [Plane?]
        /// `nil` where the SSIM term of that channel and scale has no weight.
        let sigma11: [Plane?]
    }

    /// The index of the first weight of channel `c` at `scale` for an image of `count` scales. As in the published
    /// code, the weights are taken in order over the scales the image has: a smaller image (fewer scales) uses
    /// the first weights of each channel's run for its last channel's terms too, so the index depends on `count`.
    static func weightIndex(channel c: Int, scale: Int, of count: Int) -> Int {
        (c * count + scale) * 6
    }

    /// Whether any weight of channel `c`'s SSIM term at `scale` is non-zero.
    static func usesSSIM(channel c: Int, scale: Int, of count: Int) -> Bool {
        let base = weightIndex(channel: c, scale: scale, of: count)
        return weights[base] != 0 || weights[base + 3] != 0
    }

    /// Whether any weight of channel `c`'s edge terms at `scale` is non-zero.
    static func usesEdges(channel c: Int, scale: Int, of count: Int) -> Bool {
        let base = weightIndex(channel: c, scale: scale, of: count)
        return [1, 2, 4, 5].contains { weights[base + $0] != 0 }
    }

    /// The six averages of one scale: per channel, SSIM (1-norm, 4-norm) and edges (artefact 1-, 4-norm,
    /// detail lost 1-, 4-norm).
    struct ScaleAverages {
        var ssim = [SIMD2<Double>](repeating: .zero, count: 3)
        var edge = [SIMD4<Double>](repeating: .zero, count: 3)
    }

    static let c2: Float = 0.0009

    /// The mean and 4-norm of the SSIM distance map `max(0, 1 − l·cs)` (the luminance term without its
    /// denominator, as the published metric does: XYB values are already perceptually scaled).
    static func ssimAverages(mu1: Plane, mu2: UnsafePointer<Float>, sigma11: Plane, sigma22: UnsafePointer<Float>,
                             sigma12: UnsafePointer<Float>) -> SIMD2<Double> {
        var sums = [0.0, 0.0]
        mu1.values.withUnsafeBufferPointer { m1 in
            sigma11.values.withUnsafeBufferPointer { s11 in
                wi_ss2_ssim_sums(m1.baseAddress!, mu2, s11.baseAddress!, sigma22, sigma12, mu1.width, mu1.height, c2, &sums)
            }
        }
        let n = Double(mu1.count)
        return SIMD2(sums[0] / n, pow(sums[1] / n, 0.25))
    }

    /// The edge maps: `(1 + |img2 − mu2|) / (1 + |img1 − mu1|) − 1`; its positive part is ringing or blocking
    /// the distorted image added, its negative part detail it lost. Mean and 4-norm of each.
    static func edgeAverages(image1: Plane, mu1: Plane, image2: UnsafePointer<Float>, mu2: UnsafePointer<Float>) -> SIMD4<Double> {
        var sums = [0.0, 0.0, 0.0, 0.0]
        image1.values.withUnsafeBufferPointer { i1 in
            mu1.values.withUnsafeBufferPointer { m1 in
                wi_ss2_edge_sums(i1.baseAddress!, m1.baseAddress!, image2, mu2, image1.width, image1.height, &sums)
            }
        }
        let n = Double(image1.count)
        return SIMD4(sums[0] / n, pow(sums[1] / n, 0.25), sums[2] / n, pow(sums[3] / n, 0.25))
    }

    /// The weighted sum of every average and its mapping to the score (the published weights and polynomial).
    static func finalScore(_ scales: [ScaleAverages]) -> Double {
        var sum = 0.0
        var i = 0
        for c in 0..<3 {
            for s in scales {
                for n in 0..<2 {
                    sum += weights[i] * abs(s.ssim[c][n])
                    sum += weights[i + 1] * abs(s.edge[c][n])
                    sum += weights[i + 2] * abs(s.edge[c][n + 2])
                    i += 3
                }
            }
        }
        var score = sum * 0.9562382616834844
        score = 2.326765642916932 * score - 0.020884521182843837 * score * score
            + 6.248496625763138e-05 * score * score * score
        return score > 0 ? 100 - 10 * pow(score, 0.6276336467831387) : 100
    }

    /// The 108 published weights, in the order channel → scale → norm → (SSIM, artefact, detail lost), taken in
    /// sequence over the scales an image has (`weightIndex`).
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
        1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
        1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
        1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
        0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
        0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
        0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0,
        8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353,
        0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679,
        0.0, 0.00010854057858411537,
    ]
}
