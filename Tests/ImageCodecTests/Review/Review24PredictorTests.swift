@_spi(QualityModel) @testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// Review of commit 302154d (q=auto's predictor refitted on the `quality-fit` suite's data, 3-fold cross-validated).
final class Review24PredictorTests: XCTestCase {
    /// Features as the `quality-fit` suite measured them on kodak_02 at 400 px (/work/exp/s24/fit, the data the
    /// committed coefficients were fitted on): an ordinary photo in the middle of the corpus's ranges.
    static func kodak02() throws -> QualityFeatures {
        var f = QualityFeatures(try PixelBuffer(width: 1, height: 1))
        f.lumaGradient = 9.846981783988781
        f.chromaGradient = 6.37743806078918
        f.flatFraction = 0.16990601503759398
        f.edgeFraction = 0.02142857142857143
        f.chromaLoss = 2.9597656391482907
        f.pixelCount = 400 * 266
        return f
    }

    /// A higher target never predicts a (materially) lower quality for AVIF and JPEG XL, which carry WebP's
    /// prediction onto their curves. The refit's larger WebP margin (9.6 qualities) times the carry's slope ratio
    /// (JPEG XL 1.8 qualities a point against WebP's 0.5 between scores 50 and 57.5) now sends an ordinary photo to
    /// 101 (`.predicted`: the unscored fallback, quality 97) at targets 56–58, while 60 predicts 79 and 62 predicts
    /// 70; AVIF's prediction falls 61 → 56 from 57 to 60. (One quality of rounding jitter is allowed.)
    func testCarriedPredictionRisesWithTheTarget() throws {
        let f = try Self.kodak02()
        var drops: [String] = []
        for format in [ImageFormat.jpegXL, .avif] {
            for check in [QualityTarget.Check.predicted, .scored] {
                var previous: (target: Int, q: Int)?
                for target in 50...85 {
                    let q = QualityModel.quality(for: Double(target), features: f, format: format, subsampling: .yuv444, check: check)
                    if let p = previous, q < p.q - 1 { drops.append("\(format) \(check): \(p.target)→\(p.q), \(target)→\(q)") }
                    previous = (target, q)
                }
            }
        }
        XCTAssertEqual(drops, [], "a higher target predicts a lower quality")
        // The unscored mode gives up on the photo at 57 (predicted above 100: the fallback) but not at 60.
        XCTAssertLessThanOrEqual(QualityModel.quality(for: 57, features: f, format: .jpegXL, subsampling: .yuv444, check: .predicted),
                                 QualityModel.quality(for: 60, features: f, format: .jpegXL, subsampling: .yuv444, check: .predicted))
    }

    /// `q=auto:high:predicted` as WebP: a prediction above 100 serves lossless WebP (`fallback`), though
    /// `lossyWebPReaches` says lossy reaches 80 and lossy WebP at q100 (or far lower) does reach it. With the old
    /// coefficients no corpus photo was predicted above 99 at 80; the refit's margin (9.6) sends 7 of 67 lossless.
    /// The fit script's replay never sees it (`at()` clamps a prediction of 101 to the measured q100, lossy), so its
    /// bytes at 80 (docs/quality.md) leave it out.
    func testHighPredictedWebPIsNotLosslessWhereLossyReaches() throws {
        let target = QualityTarget.high.checked(.predicted)
        var needless: [String] = []
        var photos = 0
        for url in try QualityCorpus.photos() {
            let source = try QualityCorpus.thumbnail(url, maxPixelSize: 400)
            let features = QualityFeatures(source)
            photos += 1
            guard QualityModel.lossyWebPReaches(target.minimumScore, features: features),
                  QualityModel.quality(for: target.minimumScore, features: features, format: .webp, subsampling: .yuv420,
                                       check: .predicted) > 100 else { continue }
            let report = try AutomaticQuality.encode(source, format: .webp, target: target, options: EncodeOptions()) {
                try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
            }
            // What lossy WebP does at q100 and q90 (the search's encoder settings and the plain ones alike).
            var lossy = EncodeOptions(quality: 1)
            let q100 = try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: source)], format: .webp, loopCount: 0, options: lossy)
            lossy.quality = 0.9
            let q90 = try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: source)], format: .webp, loopCount: 0, options: lossy)
            let score100 = try SSIMULACRA2.score(reference: source, distorted: ImageDecoder.decode(q100).firstFrame.buffer)
            let score90 = try SSIMULACRA2.score(reference: source, distorted: ImageDecoder.decode(q90).firstFrame.buffer)
            if report.usedFallback, score100 >= target.minimumScore {
                needless.append("\(url.lastPathComponent): lossless \(report.data.count) B; lossy q100 \(q100.count) B scores "
                                + "\(String(format: "%.1f", score100)), q90 \(q90.count) B \(String(format: "%.1f", score90))")
            }
        }
        print("Review24 high predicted WebP, lossless where lossy reaches 80 (\(needless.count) of \(photos)):\n  "
              + needless.joined(separator: "\n  "))
        XCTAssertEqual(needless, [], "lossless served where lossy WebP reaches the target")
    }

    /// The unscored mode encodes WebP with plain RGB→YUV, but the refit's data (the `quality-fit` suite) encodes
    /// WebP with sharp YUV (`usesSharpYUV`, "as the search does"), and the unscored margin is the 80th percentile of
    /// those encodes' residuals: the model is applied to an encoder it was not fitted on.
    func testPredictedWebPEncodesAsTheModelWasFitted() throws {
        let image = try Patterns.make(width: 96, height: 64) { x, y in RGBA(r: UInt8(x * 2), g: UInt8(y * 3), b: UInt8((x ^ y) & 0xFF)) }
        var seen: [Bool] = []
        _ = try AutomaticQuality.encode(image, format: .webp, target: QualityTarget.medium.checked(.predicted), options: EncodeOptions()) {
            seen.append($1.usesSharpYUV)
            return try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
        }
        XCTAssertEqual(seen, [true], "the unscored WebP encode's usesSharpYUV (the fit's data: true)")
    }

    /// The same on the corpus: the unscored mode's WebP at 70, scored, against the same quality encoded as the
    /// model's data was (sharp YUV). Observed: 16 of 66 lossy outputs under 70 as served, 10 at the same qualities
    /// with sharp YUV, which is the script's cross-validated 10 of 67: the in-sample miss rate the commit reports
    /// (24 %) is the encoder mismatch, not the predictor.
    func testPredictedWebPMissesMoreThanTheFittedEncoder() throws {
        var (served, fitted, photos) = (0, 0, 0)
        for url in try QualityCorpus.photos() {
            let source = try QualityCorpus.thumbnail(url, maxPixelSize: 400)
            let report = try AutomaticQuality.encode(source, format: .webp, target: QualityTarget.medium.checked(.predicted),
                                                     options: EncodeOptions()) {
                try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
            }
            guard !report.usedFallback else { continue }
            photos += 1
            var sharp = EncodeOptions(quality: report.encodedQuality)
            sharp.usesSharpYUV = true
            let alternative = try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: source)], format: .webp, loopCount: 0, options: sharp)
            let a = try SSIMULACRA2.score(reference: source, distorted: ImageDecoder.decode(report.data).firstFrame.buffer)
            let b = try SSIMULACRA2.score(reference: source, distorted: ImageDecoder.decode(alternative).firstFrame.buffer)
            served += a < 70 ? 1 : 0
            fitted += b < 70 ? 1 : 0
        }
        print("Review24 predicted WebP at 70: \(served) of \(photos) under as served (plain YUV), \(fitted) with sharp YUV")
        XCTAssertLessThanOrEqual(served, fitted, "the served encode misses more often than the encoder the model was fitted on")
    }

    /// A 1-bit Floyd–Steinberg dither of a gradient (black and white: GIF-era graphics, halftones, e-ink): strong
    /// edges on most pixels (edge fraction 0.78, outside the corpus's 0…0.34). The refit doubled WebP's
    /// edge-fraction weight (−45.4 → −94.6), so the unscored mode now predicts quality 1 for `q=auto` and 16 for
    /// `q=auto:high`, while `lossyWebPReaches` keeps lossy: q1 scores 40.2, 29.8 under 70, past the shortfall the
    /// package bounds on photos (`AutomaticQualityTests.predictedShortfallBound`, 20); q16 scores 68.5 against 80.
    /// The old coefficients predicted 25 and 44, which scored 74.4 and 83.2: both passed.
    func testPredictedWebPOnADitheredGraphic() throws {
        let (width, height) = (256, 192)
        var level = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let across: Double = Double(x) / Double(width) * 0.7, down: Double = Double(y) / Double(height) * 0.3
                level[y * width + x] = (across + down) * 255
            }
        }
        var bits = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x, old = level[i], new: Double = old >= 128 ? 255 : 0
                bits[i] = new == 255 ? 255 : 0
                let e = old - new
                if x + 1 < width { level[i + 1] += e * 7 / 16 }
                if y + 1 < height {
                    if x > 0 { level[i + width - 1] += e * 3 / 16 }
                    level[i + width] += e * 5 / 16
                    if x + 1 < width { level[i + width + 1] += e / 16 }
                }
            }
        }
        let image = try Patterns.make(width: width, height: height) { x, y in
            let v = bits[y * width + x]
            return RGBA(r: v, g: v, b: v)
        }
        let features = QualityFeatures(image)
        for target in [QualityTarget.medium, .high] {
            let report = try AutomaticQuality.encode(image, format: .webp, target: target.checked(.predicted), options: EncodeOptions()) {
                try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
            }
            let score = report.usedFallback ? 100
                : try SSIMULACRA2.score(reference: image, distorted: ImageDecoder.decode(report.data).firstFrame.buffer)
            // The same image at the previous coefficients' unscored quality, for comparison.
            let previous = QualityModel.Coefficients(weights: [56.1133, 19.7647, -0.289087, 0, -10.5054, -45.3891, 19.9593, -16.1376, 0],
                                                     predictedMargin: 6.153)
            let oldQuality = Int((previous.evaluate(features.inputs(target: target.minimumScore)) + previous.predictedMargin).rounded(.up))
            let old = try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: image)], format: .webp, loopCount: 0,
                                                     options: EncodeOptions(quality: Double(max(1, oldQuality)) / 100))
            let oldScore = try SSIMULACRA2.score(reference: image, distorted: ImageDecoder.decode(old).firstFrame.buffer)
            print("Review24 dither \(target): edge fraction \(features.edgeFraction), q\(report.quality), fallback "
                  + "\(report.usedFallback), score \(score); previous coefficients q\(oldQuality) score \(oldScore)")
            XCTAssertLessThanOrEqual(target.minimumScore - score, AutomaticQualityTests.predictedShortfallBound,
                                     "\(target): q\(report.quality) scores \(score)")
        }
    }

    /// Seeded random features, inside the fit's ranges and far past them (NaN, infinities, negatives included), for
    /// every format, subsampling and check: the prediction stays within 1…101 and never falls by more than one
    /// quality as the target rises by half a point from 0 to 100 (the clamp, the carry through WebP's score curve).
    func testRandomFeaturesPredictWithinRangeAndRiseWithTheTarget() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["REVIEW24_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let specials: [Double] = [.nan, .infinity, -.infinity, -1, 0, 1e300]
        func value(_ range: ClosedRange<Double>) -> Double {
            switch rng.next() % 10 {
            case 0: return specials[Int(rng.next() % UInt64(specials.count))]
            case 1: return range.upperBound * Double(rng.next() % 1000) / 10
            default: return range.lowerBound + (range.upperBound - range.lowerBound) * Double(rng.next() % 10_001) / 10_000
            }
        }
        let r = QualityModel.fittedRanges
        var failures: [String] = []
        for _ in 0..<300 {
            var f = QualityFeatures(try PixelBuffer(width: 1, height: 1))
            f.lumaGradient = value(r.lumaGradient)
            f.chromaGradient = value(r.chromaGradient)
            f.flatFraction = value(r.flatFraction)
            f.edgeFraction = value(r.edgeFraction)
            f.chromaLoss = value(r.chromaLoss)
            for format in [ImageFormat.jpeg, .webp, .avif, .jpegXL] {
                for subsampling in [ChromaSubsampling.yuv420, .yuv444] {
                    for check in [QualityTarget.Check.scored, .predicted] {
                        var previous = 0
                        for half in 0...200 {
                            let q = QualityModel.quality(for: Double(half) / 2, features: f, format: format,
                                                         subsampling: subsampling, check: check)
                            if !(1...101).contains(q) || q < previous - 1 {
                                failures.append("\(format) \(subsampling) \(check) at \(Double(half) / 2): \(q) after \(previous), \(f)")
                                break
                            }
                            previous = max(previous, q)
                        }
                    }
                }
            }
        }
        XCTAssertEqual(failures.prefix(5), [], "seed \(seed) (REVIEW24_SEED to replay), \(failures.count) failures")
    }
}
