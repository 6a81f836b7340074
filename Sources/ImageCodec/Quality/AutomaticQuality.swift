import Foundation

/// Automatic quality: encodes a still at a quality whose decoded result keeps a SSIMULACRA2 score of at least the
/// target against the pixels given (`EncodeOptions.automaticQuality`; `ImageEncoder` runs it).
///
/// A predictor (`QualityModel`, fitted offline on the shared corpus) gives a quality from cheap features of the
/// image (`QualityFeatures`: one pass over the pixels). Then, by the target's `check`:
/// - `.scored` (the default): a search (`QualitySearch`) starts at the predictor's median quality and refines by
///   the measured slope over the format's grid of qualities (`Grid`: whole qualities; AVIF's quantizers, JPEG XL's
///   quarter qualities), scoring at most 4 of them (AVIF 5, WebP and JPEG XL 6, `maximumScoredTries(for:)`);
///   when none reaches the target, the output is written unscored at the format's fallback (JPEG: quality 100,
///   4:4:4; WebP: lossless; others: quality 97, AVIF and JPEG XL lossless when a try at or above 97 missed), so a
///   measured miss is never served. Chroma: the image with its chroma subsampled 4:2:0 and restored
///   (`ChromaDetail`) is scored first: that is the most a 4:2:0 JPEG can reach. JPEG is written 4:4:4 when that
///   ceiling is under the target plus `subsamplingMargin` (or the target is 85 or more), else 4:2:0, and the
///   chosen quality is written progressive (the same pixels in 2-6 % fewer bytes on photos, up to 20 % on
///   graphics). Lossy WebP
///   converts to YUV with libwebp's sharp conversion (`use_sharp_yuv`), and its winner is encoded once more at
///   method 6, served when that still scores at or above the target in fewer bytes. AVIF's winner (searched at
///   the effort's speed 8) is encoded once or twice more by libaom at speed 5, 3 quantizers coarser and then by
///   that one's score, the coarsest that still scores at or above the target served (`avifRefinementSpeed`;
///   skipped when the deadline could not hold it).
/// - `.predicted`: one encode at the predictor's quality plus its margin (a high quantile of its fit residuals),
///   nothing scored; JPEG's subsampling and WebP's lossless choice come from the predictor too. A share of images
///   lands under the target (measured: docs/quality.md).
///
/// A transparent image's candidates are also scored composited on black and on white, the lowest score counting
/// (`ScoringReference`): on the metric's own mid grey an alpha error shows at half its contrast.
///
/// An image under 8 pixels on a side, which the metric cannot measure (`SSIMULACRA2` has no scale for it and
/// scores anything 100), is written as the scored mode's fallback without a search.
///
/// - Important: Stateless and thread-safe. Scored: the features, the reference's half of the metric (three for a
///   transparent image, and three comparisons per candidate), JPEG's 4:2:0
///   ceiling (one comparison), then up to 4 (AVIF 5, WebP and JPEG XL 6) encodes, decodes and comparisons, and one
///   more encode (JPEG's progressive winner, WebP's method-6 winner with its decode and comparison, or the fallback);
///   AVIF up to two speed-5 encodes, decodes and comparisons, each encode about 7–11× a speed-8 try's.
///   Predicted: the features and one encode. The decoded candidates are the only extra memory besides the
///   metric's scratch (one at a time).
package enum AutomaticQuality {
    /// The quality of the unscored fallback of formats other than JPEG (100, 4:4:4) and WebP (lossless); AVIF and
    /// JPEG XL write lossless instead when a try at or above it was scored and missed.
    static let fallbackQuality = 97

    /// At most this many levels of `format`'s grid are scored (the first guess included). 4: real curves have
    /// plateaus (libjpeg's quantiser steps), and the predictor's error (about ±11 qualities on images it was not
    /// fitted on) is more than one or two refinements absorb without overshooting the bytes. WebP 6: libwebp's
    /// score-against-quality curves at thumbnail sizes are flat and jagged (a photo gaining 15 points from q40 to
    /// q85 with dips of 3), so 4 tries often stopped well above the target; 6 tries to a bracket of 1 quality gave
    /// 4.5 % fewer WebP bytes at the same target on the corpus (docs/quality.md), at about 1.5 more tries a file
    /// of a ~20 ms try (encode, decode, score) at 400×300. JPEG XL 6: on its grid of quarter qualities, 6 tries
    /// wrote 1.0 % fewer bytes than 4 at the same target; AVIF 5 on its quantizers, 0.9 % fewer than 4
    /// (docs/quality.md).
    static func maximumScoredTries(for format: ImageFormat) -> Int {
        format == .webp || format == .jpegXL ? 6 : format == .avif ? 5 : 4
    }

    /// libaom's speed for AVIF's re-encode of the search's winner: 5. At equal SSIMULACRA2 on 12 corpus files at
    /// 400×300 (ideal resize, `avifenc -y 444`), speed 5 writes 0.864× the bytes of the search's trimmed speed 8,
    /// speed 4 0.861×, speed 6 0.940×; a speed-5 encode costs about 11× speed 8's CPU at 400×300 (1.00 s against
    /// 0.09 s, avifenc, loaded machine), 7× at 1200×750, speed 4 1.3–1.6× speed 5's (docs/quality.md).
    package static let avifRefinementSpeed: Int32 = 5
    /// How many quantizers coarser than the search's winner the first re-encode is: 3. At equal quantizer speed 5
    /// scores about 2–4 points more than speed 8 at about the same bytes; speed 5's coarsest passing quantizer was
    /// the winner's + 3 on 9 of 12 corpus files measured (+2 on two, +6 on one).
    static let avifRefinementStep = 3
    /// Speed 5's score per AV1 quantizer near the target, for the second re-encode's step: 1.4 points (1.0–1.9
    /// between adjacent quantizers around 76 on the 12 files).
    static let avifRefinementPointsPerQuantizer = 1.4
    /// No re-encode above this many pixels (1,500,000: 1200 × 1250; the 1200 px wide outputs of the benchmark are
    /// 0.7–1.44 Mpx): a speed-5 encode of 1.5 Mpx takes 3.5–7 s of CPU, two of them up to twice that, which a
    /// caller without a deadline (the SDK, the CLI) would wait for.
    package static let avifRefinementMaximumPixels = 1_500_000
    /// The first re-encode is started only when the deadline is at least this many times the winner's own encode
    /// time away (and `avifRefinementSecondsPerPixel` allows it): speed 5 costs 7–14× the search's speed 8 on
    /// photographs, with a margin for a busier machine. Smooth images are the exception (PastelHills at 1000×625:
    /// 40–42×, `Review21AVIFRefinementTests`): the pixel bound covers them.
    static let avifRefinementCostRatio = 16
    /// A floor under the first re-encode's estimate, in seconds a pixel: 7 µs (speed 5 measured 2.3–4.6 µs a pixel
    /// at 0.1–2.5 Mpx on this 2-core machine, `avifenc` user time, process start included; up to 6.9 µs under load,
    /// where the winner's own time, the other term, grows too; 6 µs until 2026-11-30, when a smooth 1000×625 image
    /// took 6.3–6.5 µs a pixel in process on a loaded machine, `Review21AVIFRefinementTests`), so a 400×300 output
    /// needs 0.84 s before the deadline and a 1200×800 one 6.7 s. The second re-encode is estimated from the first one's measured time (encode and
    /// score), × `avifRefinementRepeatMargin`.
    static let avifRefinementSecondsPerPixel = 7e-6
    /// The second re-encode's estimate over the first one's measured time: 1.25 (a neighbouring quantizer).
    static let avifRefinementRepeatMargin = 1.25

    /// How long the first speed-5 re-encode, its decode and its score are expected to take, from the search's
    /// winning try (`winnerEncode` its encode, `winnerTry` its encode, decode and score) and the output's `pixels`:
    /// the larger of `avifRefinementCostRatio` × the encode (it follows the machine's load) and
    /// `avifRefinementSecondsPerPixel` × the pixels (it holds for smooth images, where speed 8 is very fast: 40–42×
    /// at 1000×625, `Review21AVIFRefinementTests`), plus the try's decode and score.
    static func avifRefinementEstimate(winnerEncode: Duration, winnerTry: Duration, pixels: Int) -> Duration {
        max(winnerEncode * avifRefinementCostRatio, .seconds(Double(pixels) * avifRefinementSecondsPerPixel))
            + max(.zero, winnerTry - winnerEncode)
    }

    /// The search stops when its passing and failing levels are this close (`QualitySearch.tolerance`): WebP 1
    /// quality, AVIF 1 quantizer (adjacent ones), JPEG XL 2 quarter qualities (1 wrote the same bytes), JPEG 2
    /// qualities (see `maximumScoredTries(for:)`).
    static func searchTolerance(for format: ImageFormat) -> Int {
        format == .webp || format == .avif ? 1 : 2
    }

    /// What one automatic encode did (for tests and the benchmark).
    struct Report {
        let data: Data
        /// The quality written, rounded to 1…100 (`encodedQuality` is the exact one).
        let quality: Int
        let subsampling: ChromaSubsampling
        /// The scored tries, as levels of the format's `Grid`.
        let tries: [QualitySearch.Try]
        let usedFallback: Bool
        /// The predictor's quality for this check (the search's start when scored; 101: even 100 expected to miss).
        var predictedQuality = 0
        /// The `EncodeOptions.quality` (0…1) of the output.
        var encodedQuality = 0.0
        /// The libaom speed of AVIF's re-encode when that is the output (`avifRefinementSpeed`), else `nil`.
        var refinedSpeed: Int32?
    }

    /// `Report.quality` of the `EncodeOptions.quality` `quality`: rounded to a whole quality within 1…100 (JPEG XL's
    /// level 1, quality 0.0025, rounded to 0).
    static func percent(_ quality: Double) -> Int {
        min(100, max(1, Int((min(1, max(0, quality)) * 100).rounded())))
    }

    /// A format's grid of qualities for the search: level 1…`levels` is encoded at `quality(level)`.
    ///
    /// JPEG, WebP and the rest: qualities 1…100. AVIF: one level per AV1 quantizer (`AVIFEncoder` maps the quality
    /// onto 64 of them, so a grid of 100 qualities has steps that change nothing and steps that skip one).
    /// JPEG XL: quarter qualities (its distance is continuous; at whole qualities a bracket of 2 left up to
    /// 1.5 points of score unused: docs/quality.md).
    struct Grid: Equatable {
        /// The levels 1…`levels`.
        let levels: Int
        /// Whether level k is the middle of the interval of qualities an encoder truncates to one step
        /// (AVIF's quantizers) instead of the quality k / `levels`.
        var centred = false

        static func of(_ format: ImageFormat) -> Grid {
            switch format {
            case .avif: return Grid(levels: 63, centred: true)
            case .jpegXL: return Grid(levels: 400)
            default: return Grid(levels: 100)
            }
        }

        /// `EncodeOptions.quality` (0…1) of `level` (clamped to 1…`levels`). AVIF: level k is quantizer 63 − k
        /// (`AVIFEncoder` truncates (1 − quality) × 63; the quality (k − ½) / 63 is the middle of that step).
        func quality(_ level: Int) -> Double {
            let k = Double(min(max(level, 1), levels))
            return centred ? (k - 0.5) / Double(levels) : k / Double(levels)
        }

        /// The level that encodes as the quality `percent` (1…100, clamped) does.
        func level(percent: Int) -> Int {
            let p = Double(min(max(percent, 1), 100)) / 100
            let n = Double(levels)
            return centred ? max(1, levels - Int((1 - p) * n)) : max(1, Int((p * n).rounded()))
        }

        /// Levels per quality (1…100) unit: converts the models' slopes.
        var perQuality: Double { Double(levels) / 100 }
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

    /// Encodes `buffer` as `format` through `encode` (a fixed-quality encoder), choosing the quality on `grid`
    /// (default: the format's, `Grid.of(_:)`; tests compare others).
    static func encode(_ buffer: PixelBuffer, format: ImageFormat, target: QualityTarget, options: EncodeOptions,
                       grid: Grid? = nil, encode: (PixelBuffer, EncodeOptions) throws -> Data) throws -> Report {
        var options = options
        options.automaticQuality = nil
        // JPEG has no alpha: its encoder writes the premultiplied colour (transparent areas black), so that is
        // what the output is measured against; a target measured against the transparent original could never be met.
        let buffer = format == .jpeg ? try opaqueOnBlack(buffer) : buffer
        let features = QualityFeatures(buffer)
        let score = target.minimumScore
        let grid = grid ?? Grid.of(format)
        func attempt(_ level: Int) throws -> Data {
            var attempt = options
            attempt.quality = grid.quality(level)
            return try encode(buffer, attempt)
        }
        if target.check == .predicted {
            if format == .jpeg {
                options.chromaSubsampling = QualityModel.prefersFullChroma(for: score, features: features) ? .yuv444 : .yuv420
            } else if format == .webp, !QualityModel.lossyWebPReaches(score, features: features) {
                return try fallback(buffer, format: format, options: options, tries: [], encode: encode)
            }
            // WebP as the predictor's data was encoded (the search's sharp RGB→YUV: `quality-fit`); its model's
            // margin holds for that encoder only (plain YUV missed 16 of 67 corpus photos at 70, sharp YUV 10).
            if format == .webp { options.usesSharpYUV = true }
            var predicted = QualityModel.quality(for: score, features: features, format: format,
                                                 subsampling: options.chromaSubsampling, check: .predicted)
            // Lossy WebP expected to reach the target (above) but at more than quality 100: lossy 100, not lossless
            // at about 2.5× its bytes (7 corpus photos at `.high`, all reaching 80 lossy: `Review24PredictorTests`).
            if predicted > 100, format == .webp { predicted = 100 }
            if predicted > 100 { return try fallback(buffer, format: format, options: options, tries: [], encode: encode) }
            var unscored = options
            unscored.quality = Double(predicted) / 100
            return Report(data: try encode(buffer, unscored), quality: predicted, subsampling: options.chromaSubsampling,
                          tries: [], usedFallback: false, predictedQuality: predicted, encodedQuality: unscored.quality)
        }
        // Under 8 pixels on a side the metric has no scale to compare and scores any candidate 100 (a colour
        // negative included): a search would pass every try and serve one nobody measured. Such an image (an icon,
        // a 1-pixel rule, a 300×7 strip) is written as the fallback instead, a few hundred bytes.
        if SSIMULACRA2.scaleCount(width: buffer.width, height: buffer.height) == 0 {
            return try fallback(buffer, format: format, options: options, tries: [], encode: encode)
        }
        // The references (three for a transparent image) and each try's comparisons run outside any encoder's
        // deadline hook: the deadline is checked before them, whatever the encoder.
        try options.checkDeadline(format)
        // A transparent image is scored on black and on white too (`ScoringReference`), not only on the metric's grey.
        let reference = try ScoringReference(buffer)
        // The best 4:2:0 can do on this image: JPEG takes 4:4:4 below it (fine colour detail, saturated edges).
        if format == .jpeg {
            let ceiling = score >= 85 ? 0 : try reference.score(ChromaDetail.subsampled(buffer))
            options.chromaSubsampling = ceiling >= score + subsamplingMargin ? .yuv420 : .yuv444
        }
        // Lossy WebP is always 4:2:0: its sharp RGB→YUV conversion keeps colour edges that the plain one blurs
        // (a diagram reaching 86 where plain 4:2:0 stops at 60), at about the same bytes on photos.
        // A quantised alpha plane (WebP, AVIF) and, on large WebP outputs, stronger noise shaping save bytes at
        // equal score (`EncodeOptions.quantisesAlpha`, `.webPNoiseShaping`): only here, where every output is scored.
        options.quantisesAlpha = true
        if format == .webp {
            options.usesSharpYUV = true
            options.webPNoiseShaping = WebPEncoder.scoredNoiseShaping(pixelCount: buffer.width * buffer.height)
        }
        let predicted = QualityModel.quality(for: score, features: features, format: format,
                                             subsampling: options.chromaSubsampling, check: .scored)
        let model = Model.of(format, subsampling: options.chromaSubsampling)
        var encoded: [Int: Data] = [:]
        var encodeTimes: [Int: Duration] = [:], tryTimes: [Int: Duration] = [:]
        var search = QualitySearch(target: score, initialLevel: grid.level(percent: predicted),
                                   slope: model.slope(at: score) * grid.perQuality)
        search.levels = grid.levels
        search.maximumTries = maximumScoredTries(for: format)
        search.tolerance = searchTolerance(for: format)
        let outcome = try search.run { level in
            let started = ContinuousClock.now
            let data = try attempt(level)
            encodeTimes[level] = ContinuousClock.now - started
            let decoded = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
            encoded[level] = data
            try options.checkDeadline(format)
            let score = try reference.score(decoded.firstFrame.buffer)
            tryTimes[level] = ContinuousClock.now - started
            return score
        }
        if let level = outcome.level, var data = encoded[level] {
            var quality = grid.quality(level)
            var refinedSpeed: Int32?
            /// The candidate's score (the lowest of its backgrounds), `nil` when it does not decode.
            func measured(_ candidate: Data) -> Double? {
                guard let decoded = try? ImageDecoder.decode(candidate, options: DecodeOptions(firstFrameOnly: true)) else { return nil }
                return try? reference.score(decoded.firstFrame.buffer)
            }
            // The two re-encodes below only ever replace a winner already scored: if one fails or runs past the
            // deadline, the winner is served as it is.
            // Progressive JPEG holds the same coefficients (the same decoded pixels) in fewer bytes: the winner
            // alone is written so, the tries stay baseline (a progressive encode costs about 3 baseline ones), and
            // kept when smaller (on tiny images the scan headers can cost more than they save). `.smallest` tries
            // are progressive already.
            if format == .jpeg, !options.isProgressive, options.effort != .smallest {
                var progressive = options
                progressive.isProgressive = true
                progressive.quality = quality
                if let candidate = try? encode(buffer, progressive), candidate.count < data.count { data = candidate }
            }
            // WebP's method 6 (the `.smallest` effort's; 5 with alpha) spends about three times method 4's time
            // for about 4 % fewer bytes at the same score, and scores about the same at the same quality: only the
            // winner is re-encoded so, and served when it still reaches the target in fewer bytes (scored like
            // the tries). Not at `.fast` (its point is the time) nor `.smallest` (its tries are method 6).
            if format == .webp, options.effort == .balanced {
                var smallest = options
                smallest.effort = .smallest
                smallest.quality = quality
                if let candidate = try? encode(buffer, smallest), candidate.count < data.count,
                   let candidateScore = measured(candidate), candidateScore >= score {
                    data = candidate
                }
            }
            // AVIF's winner is encoded once more by libaom at `avifRefinementSpeed` (5), which reaches the same
            // score about 3 quantizers coarser than the search's speed 8 (`avifRefinementStep`), then once more
            // by the first one's score: coarser by its margin over the target at `avifRefinementPointsPerQuantizer`
            // when it passed, finer by its shortfall when it missed (never at the winner's own quantizer). Each is
            // served only when it scores at or above the target in fewer bytes (scored like the tries). Only at
            // `.balanced` (`.fast` is for time, `.smallest` searches at speed 6), up to
            // `avifRefinementMaximumPixels`, and only when the deadline leaves time for it (a speed-5 encode cannot
            // be interrupted): the first estimated as the larger of `avifRefinementCostRatio` times the winner's own
            // encode (which follows the machine's load) and `avifRefinementSecondsPerPixel` (which follows the
            // image's size), the second as the first one's measured time with a margin.
            let pixels = buffer.width * buffer.height
            if format == .avif, options.effort == .balanced, pixels <= avifRefinementMaximumPixels,
               let winnerEncode = encodeTimes[level], let winnerTry = tryTimes[level] {
                var slower = options
                slower.avifSpeed = avifRefinementSpeed
                var next: Int? = level - avifRefinementStep
                var estimate = avifRefinementEstimate(winnerEncode: winnerEncode, winnerTry: winnerTry, pixels: pixels)
                for _ in 0..<2 {
                    guard let candidateLevel = next, candidateLevel >= 1, candidateLevel < level else { break }
                    if let deadline = options.deadline, ContinuousClock.now + estimate > deadline { break }
                    next = nil
                    slower.quality = grid.quality(candidateLevel)
                    let started = ContinuousClock.now
                    // A NaN score (which the search counts as failing) would trap in the step's `Int(_:)` below.
                    guard let candidate = try? encode(buffer, slower), let candidateScore = measured(candidate),
                          candidateScore.isFinite else { break }
                    estimate = (ContinuousClock.now - started) * avifRefinementRepeatMargin
                    let steps = (abs(candidateScore - score) / avifRefinementPointsPerQuantizer).rounded(.down)
                    if candidateScore >= score {
                        if candidate.count < data.count {
                            data = candidate
                            quality = slower.quality
                            refinedSpeed = avifRefinementSpeed
                        }
                        if steps >= 1 { next = candidateLevel - Int(min(steps, 3)) }
                    } else {
                        next = candidateLevel + Int(min(steps, 3)) + 1
                    }
                }
            }
            return Report(data: data, quality: percent(quality), subsampling: options.chromaSubsampling,
                          tries: outcome.tries, usedFallback: false, predictedQuality: predicted, encodedQuality: quality,
                          refinedSpeed: refinedSpeed)
        }
        var report = try fallback(buffer, format: format, options: options, tries: outcome.tries, grid: grid, encode: encode)
        report.predictedQuality = predicted
        return report
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
    /// other formats at `fallbackQuality`, but lossless AVIF and JPEG XL when a try at or above it missed.
    private static func fallback(_ buffer: PixelBuffer, format: ImageFormat, options: EncodeOptions, tries: [QualitySearch.Try],
                                 grid: Grid? = nil, encode: (PixelBuffer, EncodeOptions) throws -> Data) throws -> Report {
        let grid = grid ?? Grid.of(format)
        let missedAboveFallback = tries.contains { grid.quality($0.level) >= Double(fallbackQuality) / 100 }
        var fallback = options
        switch format {
        case .webp:
            fallback.isLossless = true
            fallback.quality = 1
        case .jpeg:
            fallback.quality = 1
            fallback.chromaSubsampling = .yuv444
        case .avif where missedAboveFallback, .jpegXL where missedAboveFallback:
            // A quality at or above the fallback's was scored and missed: quality 97 would be a measured miss.
            fallback.isLossless = true
            fallback.quality = 1
        default:
            fallback.quality = Double(fallbackQuality) / 100
        }
        return Report(data: try encode(buffer, fallback), quality: percent(fallback.quality),
                      subsampling: fallback.chromaSubsampling, tries: tries, usedFallback: true,
                      encodedQuality: fallback.quality)
    }

    /// A format's quality → score curve near thumbnail sizes: (score, quality) points, increasing; the median
    /// quality reaching each score over a third of the shared corpus's photos at 400 px (libjpeg-turbo 4:2:0 and
    /// 4:4:4, libwebp method 4, libavif, libjxl). Its slope steps the search until two tries give a secant. Formats
    /// without their own curve use WebP's.
    struct Model {
        let points: [(score: Double, quality: Double)]

        static func of(_ format: ImageFormat, subsampling: ChromaSubsampling) -> Model {
            switch format {
            case .jpeg where subsampling == .yuv444:
                return Model(points: [(30, 15), (50, 34), (60, 45), (70, 63), (80, 79), (85, 87), (90, 93), (100, 100)])
            case .jpeg:
                return Model(points: [(30, 20), (50, 39), (60, 48), (70, 66), (80, 85), (85, 90), (90, 95), (100, 100)])
            case .avif:
                // libaom at speed 8, 4:4:4 (`AVIFEncoder`), over 14 corpus files at 400×300, photos and graphics;
                // the quality maps linearly to AV1's 64 quantizers.
                return Model(points: [(30, 17), (50, 39), (60, 44), (70, 52), (75, 57), (80, 65), (85, 74), (90, 87), (100, 100)])
            case .jpegXL:
                // libjxl at effort 5 (`JXLEncoder`), the median quality reaching each score over a third of the
                // corpus (22 files) at 400×300, scored by SSIMULACRA2 (PyPI) against the float reference resize
                // (2026-11-29; 30 extrapolated: every file scores over it at quality 30).
                return Model(points: [(30, 15), (50, 34), (60, 52), (70, 64), (75, 73), (80, 81), (85, 88), (90, 94), (100, 100)])
            default:
                return Model(points: [(30, 20), (50, 40), (60, 45), (70, 65), (80, 84), (85, 89), (90, 94), (100, 100)])
            }
        }

        /// The model's quality for `score` (interpolated, 1…100).
        func quality(for score: Double) -> Int {
            Int(interpolate(score).rounded(.up)).clamped(1, 100)
        }

        /// The model's quality for `score`, not rounded (0…100).
        func exactQuality(for score: Double) -> Double {
            min(100, max(0, interpolate(score)))
        }

        /// The model's score at `quality` (0…100): the inverse of `exactQuality(for:)` on its increasing points.
        func score(at quality: Double) -> Double {
            guard let first = points.first, let last = points.last, !quality.isNaN else { return 0 }
            if quality <= first.quality { return first.score * max(0, quality) / max(first.quality, 1) }
            if quality >= last.quality { return last.score }
            for (a, b) in zip(points, points.dropFirst()) where quality <= b.quality {
                return a.score + (b.score - a.score) * (quality - a.quality) / (b.quality - a.quality)
            }
            return last.score
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
