import Foundation

/// Automatic quality: encodes a still at the lowest quality whose decoded result keeps a SSIMULACRA2 score of at
/// least the target against the pixels given (`EncodeOptions.automaticQuality`; `ImageEncoder` runs it).
///
/// The search (`QualitySearch`) starts from a model of quality → score per format (fitted on the shared corpus
/// at thumbnail sizes), refines by the measured slope, and scores at most 3 qualities; when none reaches the
/// target, the output is written at quality 97 (4:4:4 for JPEG) unscored, so the target is never undercut by a
/// measured try. The reference's half of the metric is computed once (`SSIMULACRA2.Reference`).
///
/// JPEG's chroma subsampling is chosen per image before the search: 4:4:4 when the image's chroma has fine
/// detail that 4:2:0 would blur (`ChromaDetail`) or the target is 85 or more, else 4:2:0.
///
/// - Important: Stateless and thread-safe. Costs up to 3 encodes and decodes plus the metric (the reference's
///   half once); the decoded candidates are the only extra memory (one at a time, besides the chosen bytes).
enum AutomaticQuality {
    /// The quality of the unscored fallback.
    static let fallbackQuality = 97

    /// What one automatic encode did (for tests and the benchmark).
    struct Report {
        let data: Data
        let quality: Int
        let subsampling: ChromaSubsampling
        let tries: [QualitySearch.Try]
        let usedFallback: Bool
    }

    /// Whether automatic quality applies to `format` with `options` (lossy still output).
    static func applies(to format: ImageFormat, options: EncodeOptions, frameCount: Int) -> Bool {
        guard options.automaticQuality != nil, frameCount == 1, !options.isLossless else { return false }
        switch format {
        case .png, .apng, .gif: return false
        default: return true
        }
    }

    /// Encodes `buffer` as `format` through `encode` (a fixed-quality encoder), searching the quality.
    static func encode(_ buffer: PixelBuffer, format: ImageFormat, target: QualityTarget, options: EncodeOptions,
                       encode: (PixelBuffer, EncodeOptions) throws -> Data) throws -> Report {
        var options = options
        options.automaticQuality = nil
        if format == .jpeg {
            options.chromaSubsampling = target.minimumScore >= 85 || ChromaDetail.prefersFullChroma(buffer)
                ? .yuv444 : .yuv420
        }
        let model = Model.of(format, subsampling: options.chromaSubsampling)
        let reference = SSIMULACRA2.Reference(buffer)
        var encoded: [Int: Data] = [:]
        let search = QualitySearch(target: target.minimumScore, initialQuality: model.quality(for: target.minimumScore),
                                   slope: model.slope(at: target.minimumScore))
        let outcome = try search.run { quality in
            var attempt = options
            attempt.quality = Double(quality) / 100
            let data = try encode(buffer, attempt)
            let decoded = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
            let score = try reference.score(decoded.firstFrame.buffer)
            encoded[quality] = data
            return score
        }
        if let quality = outcome.quality, let data = encoded[quality] {
            return Report(data: data, quality: quality, subsampling: options.chromaSubsampling, tries: outcome.tries,
                          usedFallback: false)
        }
        var fallback = options
        fallback.quality = Double(fallbackQuality) / 100
        if format == .jpeg { fallback.chromaSubsampling = .yuv444 }
        return Report(data: try encode(buffer, fallback), quality: fallbackQuality, subsampling: fallback.chromaSubsampling,
                      tries: outcome.tries, usedFallback: true)
    }

    /// A format's quality → score curve near thumbnail sizes: (score, quality) points, increasing; the median
    /// quality reaching each score over a third of the shared corpus's photos at 400 px (libjpeg-turbo 4:2:0 and
    /// 4:4:4, libwebp method 4). Single images scatter ±15 qualities around it, which the refinements absorb.
    /// Formats without their own curve use WebP's.
    struct Model {
        let points: [(score: Double, quality: Double)]

        static func of(_ format: ImageFormat, subsampling: ChromaSubsampling) -> Model {
            switch format {
            case .jpeg where subsampling == .yuv444:
                return Model(points: [(30, 15), (50, 34), (60, 45), (70, 63), (80, 79), (85, 87), (90, 93), (100, 100)])
            case .jpeg:
                return Model(points: [(30, 20), (50, 39), (60, 48), (70, 66), (80, 85), (85, 90), (90, 95), (100, 100)])
            default:
                return Model(points: [(30, 20), (50, 40), (60, 45), (70, 65), (80, 84), (85, 89), (90, 94), (100, 100)])
            }
        }

        /// The model's quality for `score` (interpolated, 1…100).
        func quality(for score: Double) -> Int {
            Int(interpolate(score).rounded(.up)).clamped(1, 100)
        }

        /// Qualities per point of score around `score`.
        func slope(at score: Double) -> Double {
            max(0.5, (interpolate(score + 2.5) - interpolate(score - 2.5)) / 5)
        }

        private func interpolate(_ score: Double) -> Double {
            guard let first = points.first, let last = points.last else { return 80 }
            if score <= first.score { return first.quality * max(0, score) / max(first.score, 1) }
            if score >= last.score { return last.quality }
            for (a, b) in zip(points, points.dropFirst()) where score <= b.score {
                return a.quality + (b.quality - a.quality) * (score - a.score) / (b.score - a.score)
            }
            return last.quality
        }
    }
}

extension Comparable {
    fileprivate func clamped(_ low: Self, _ high: Self) -> Self { min(high, max(low, self)) }
}
