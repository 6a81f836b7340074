/// Automatic quality's predictor: the quality a format needs to reach a target on an image, from its
/// `QualityFeatures`, before any encode; and the two choices the search used to score for (JPEG's chroma
/// subsampling, whether lossy WebP can reach the target at all).
///
/// Linear models on `QualityFeatures.inputs(target:)` (features clamped to the fit's ranges), fitted offline on
/// the shared corpus at 400 px through our own decoder and encoders (`scripts/quality/fit_quality_model.py` on the
/// benchmark suite `quality-fit`; the coefficients are in `QualityModel+Coefficients.swift`). Each quality model
/// carries two margins added to its prediction, from its 3-fold cross-validated residuals: for the scored search's
/// start, their median (the search refines either way); for the unscored mode, their 80th percentile, so about four
/// images in five pass without a check (the miss rate is measured: docs/quality.md).
///
/// - Important: Stateless and thread-safe.
enum QualityModel {
    /// One encoding's linear model: quality = weights · inputs + the check's margin.
    struct Coefficients {
        let weights: [Double]
        /// Added for the scored search's first try.
        var margin: Double = 0
        /// Added for the unscored mode's only encode.
        var predictedMargin: Double = 0

        func evaluate(_ inputs: [Double]) -> Double {
            zip(weights, inputs).reduce(0) { $0 + $1.0 * $1.1 }
        }
    }

    /// The quality (1…100, or more than 100 when the model expects even 100 to miss) predicted for `target` on
    /// an image with `features`, for `format` at `subsampling` (AVIF and JPEG XL: WebP's, carried onto the format's
    /// own quality curve; other formats use WebP's model).
    static func quality(for target: Double, features: QualityFeatures, format: ImageFormat,
                        subsampling: ChromaSubsampling, check: QualityTarget.Check) -> Int {
        let model = format == .jpeg ? (subsampling == .yuv444 ? jpeg444 : jpeg420) : webp
        // The quality models are linear: features past the corpus's are held at its ends, not extrapolated.
        var q = model.evaluate(features.clampedToTheFit().inputs(target: target))
            + (check == .scored ? model.margin : model.predictedMargin)
        guard q.isFinite else { return 100 }
        if format == .avif || format == .jpegXL {
            // AVIF and JPEG XL have no fitted model: WebP's prediction is read as a score on WebP's median curve and
            // that score read back as a quality on the format's own median curve (a harder image is harder for
            // both). Monotone in the target, as WebP's prediction is; carrying the distance in points by the two
            // slopes was not (JPEG XL's 1.8 qualities a point against WebP's 0.5 around 55 sent a photo to 101 at
            // 57 and to 79 at 60: `Review24PredictorTests`). Above 100 stays above 100: even 100 is expected to miss.
            guard q <= 100 else { return 101 }
            let score = AutomaticQuality.Model.of(.webp, subsampling: .yuv420).score(at: q)
            q = AutomaticQuality.Model.of(format, subsampling: .yuv444).exactQuality(for: score)
        }
        // Features or a target outside what images and `QualityTarget` give (the SPI can set any) make a finite
        // value past `Int`'s range: clamped before it becomes an `Int`, which trapped.
        return Int(q.clamped(1, 101).rounded(.up))
    }

    /// Whether JPEG should be written 4:4:4 for `target`: the model of log(bytes 4:4:4 / bytes 4:2:0) at equal
    /// score is negative (fine colour detail, saturated edges: 4:2:0 would need a far higher quality), or the
    /// target is 85 or more.
    static func prefersFullChroma(for target: Double, features: QualityFeatures) -> Bool {
        target >= 85 || Coefficients(weights: fullChromaSaving).evaluate(features.inputs(target: target)) < 0
    }

    /// Whether lossy WebP (always 4:2:0) is expected to reach `target`: its predicted best score (q100) is at
    /// least a point above it.
    static func lossyWebPReaches(_ target: Double, features: QualityFeatures) -> Bool {
        Coefficients(weights: webpCeiling).evaluate(features.inputs(target: 70)) >= target + 1
    }
}

extension Comparable {
    fileprivate func clamped(_ low: Self, _ high: Self) -> Self { min(high, max(low, self)) }
}
