import Foundation

/// Automatic quality: encodes a still at the lowest quality whose decoded result keeps a SSIMULACRA2 score of at
/// least the target against the pixels given (`EncodeOptions.automaticQuality`; `ImageEncoder` runs it).
///
/// The search (`QualitySearch`) starts from a model of quality → score per format (fitted on the shared corpus
/// at thumbnail sizes), refines by the measured slope, and scores at most 4 qualities; when none reaches the
/// target, the output is written unscored at the format's fallback (JPEG: quality 100, 4:4:4; WebP: lossless;
/// others: quality 97), so a measured miss is never served. The reference's half of the metric is computed once
/// (`SSIMULACRA2.Reference`).
///
/// Chroma: the image with its chroma subsampled 4:2:0 and restored (`ChromaDetail`) is scored first: that is the
/// most any 4:2:0 encode can reach. JPEG is written 4:4:4 when that ceiling is under the target plus
/// `subsamplingMargin` (or the target is 85 or more), else 4:2:0; lossy WebP (4:2:0 only) goes straight to its
/// lossless fallback when the ceiling is under the target.
///
/// - Important: Stateless and thread-safe. Costs up to 4 encodes and decodes plus the metric (5 encodes with the fallback) (the reference's
///   half once); the decoded candidates are the only extra memory (one at a time, besides the chosen bytes).
enum AutomaticQuality {
    /// The quality of the unscored fallback of formats other than JPEG (100, 4:4:4) and WebP (lossless).
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

    /// How far above the target the 4:2:0 ceiling (`ChromaDetail`) must be for JPEG to take 4:2:0: near its
    /// ceiling 4:2:0 needs a very high quality and costs more than 4:4:4 (kodak_23 at 300 px: 4:2:0 reached 60
    /// at q94, 21 KB, where 4:4:4 reached 70 at q76, 13 KB, with a ceiling of about 75).
    static let subsamplingMargin = 12.0

    /// Encodes `buffer` as `format` through `encode` (a fixed-quality encoder), searching the quality.
    static func encode(_ buffer: PixelBuffer, format: ImageFormat, target: QualityTarget, options: EncodeOptions,
                       encode: (PixelBuffer, EncodeOptions) throws -> Data) throws -> Report {
        var options = options
        options.automaticQuality = nil
        // JPEG has no alpha: its encoder writes the premultiplied colour (transparent areas black), so that is
        // what the output is measured against; a target measured against the transparent original could never be met.
        let buffer = format == .jpeg ? try opaqueOnBlack(buffer) : buffer
        let reference = SSIMULACRA2.Reference(buffer)
        // The best 4:2:0 can do on this image: JPEG takes 4:4:4 below it (fine colour detail, saturated edges);
        // lossy WebP, always 4:2:0, cannot reach the target at any quality, so it is written losslessly at once.
        if format == .jpeg || format == .webp {
            let ceiling = target.minimumScore >= 85 && format == .jpeg ? 0
                : try reference.score(ChromaDetail.subsampled(buffer))
            let fits = ceiling >= target.minimumScore + subsamplingMargin
            if format == .jpeg {
                options.chromaSubsampling = fits ? .yuv420 : .yuv444
            } else if ceiling < target.minimumScore + 1 {
                return try fallback(buffer, format: format, options: options, tries: [], encode: encode)
            }
        }
        let model = Model.of(format, subsampling: options.chromaSubsampling)
        var encoded: [Int: Data] = [:]
        let search = QualitySearch(target: target.minimumScore, initialQuality: model.quality(for: target.minimumScore),
                                   slope: model.slope(at: target.minimumScore))
        let outcome = try search.run { quality in
            var attempt = options
            attempt.quality = Double(quality) / 100
            let data = try encode(buffer, attempt)
            let decoded = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
            encoded[quality] = data
            return try reference.score(decoded.firstFrame.buffer)
        }
        if let quality = outcome.quality, let data = encoded[quality] {
            return Report(data: data, quality: quality, subsampling: options.chromaSubsampling, tries: outcome.tries,
                          usedFallback: false)
        }
        return try fallback(buffer, format: format, options: options, tries: outcome.tries, encode: encode)
    }

    /// `buffer` as JPEG's encoder sees it: premultiplied colour, alpha dropped (opaque pixels unchanged).
    static func opaqueOnBlack(_ buffer: PixelBuffer) throws -> PixelBuffer {
        guard !buffer.isOpaque else { return buffer }
        let premultiplied = buffer.converted(to: .rgba8Premultiplied)
        var out = try PixelBuffer(width: buffer.width, height: buffer.height)
        let (inStride, outStride) = (premultiplied.bytesPerRow, out.bytesPerRow)
        premultiplied.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for y in 0..<buffer.height {
                    for x in 0..<buffer.width {
                        let p = y * inStride + x * 4, q = y * outStride + x * 4
                        dst[q] = src[p]
                        dst[q + 1] = src[p + 1]
                        dst[q + 2] = src[p + 2]
                        dst[q + 3] = 255
                    }
                }
            }
        }
        return out
    }

    /// The unscored output when no try reached the target: lossless WebP; JPEG at quality 100 with 4:4:4;
    /// other formats at `fallbackQuality`.
    private static func fallback(_ buffer: PixelBuffer, format: ImageFormat, options: EncodeOptions, tries: [QualitySearch.Try],
                                 encode: (PixelBuffer, EncodeOptions) throws -> Data) throws -> Report {
        var fallback = options
        switch format {
        case .webp:
            fallback.isLossless = true
            fallback.quality = 1
        case .jpeg:
            fallback.quality = 1
            fallback.chromaSubsampling = .yuv444
        default:
            fallback.quality = Double(fallbackQuality) / 100
        }
        return Report(data: try encode(buffer, fallback), quality: Int((fallback.quality * 100).rounded()),
                      subsampling: fallback.chromaSubsampling, tries: tries, usedFallback: true)
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
