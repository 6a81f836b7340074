/// The search of automatic quality over the integer levels 1…`levels` of a format's quality grid (JPEG's and
/// WebP's qualities 1…100, AVIF's quantizers, JPEG XL's quarter qualities: `AutomaticQuality.Grid`), given a way
/// to score one: a model's first guess, then refinements by the measured slope (secant between the nearest
/// passing and failing tries), keeping the lowest level that passed.
///
/// It assumes the score grows with the quality (it does for libjpeg-turbo and libwebp up to noise of a fraction
/// of a point); where it does not, it still returns only qualities it measured as passing, or the fallback.
///
/// - Important: A value type; not thread-safe while `run` is in progress (it is used by one encode).
struct QualitySearch {
    /// The score to reach.
    let target: Double
    /// The model's first guess (1…`levels`).
    let initialLevel: Int
    /// The model's slope: levels per point of score near the target (used until two tries give a secant), taken
    /// within the secant's bounds (0.2…10 qualities a point, scaled to the grid; NaN: 1 quality a point).
    let slope: Double
    /// The grid: levels 1…`levels`, each a quality the caller can encode. Default 100 (qualities 1…100).
    var levels = 100
    /// At most this many levels are scored (the first guess included). Default 4: real curves have plateaus
    /// (libjpeg's and libwebp's quantiser steps) where 3 tries often ended just under the target.
    var maximumTries = 4
    /// Stop when the passing and failing levels bracketing the answer are this close. Default 2.
    var tolerance = 2

    /// One scored try.
    struct Try: Equatable {
        /// The level scored (of the grid 1…`levels`).
        let level: Int
        let score: Double
    }

    /// The outcome: the chosen level (`nil` when no try passed: the caller falls back) and every try in order.
    struct Outcome {
        let level: Int?
        let tries: [Try]
    }

    /// Scores levels with `evaluate` (at most `maximumTries` calls, never the same level twice) and returns the
    /// lowest that reached `target`.
    ///
    /// Total for any input: a NaN score counts as failing, ±infinite ones pass or fail but give no slope, and a
    /// NaN, infinite or absurd slope or target moves the next try to the bracket's middle or its end instead of
    /// trapping in `Int(_:)`; grids up to `Int.max - 1` levels.
    func run(_ evaluate: (Int) throws -> Double) rethrows -> Outcome {
        var tries: [Try] = []
        // `top + 1` is the "nothing passed yet" sentinel: keep it representable.
        let top = min(max(1, levels), Int.max - 1)
        // The slope's bounds, in levels per point: 0.2…10 qualities per point on a grid of 100 (the secant's, and
        // the model's: a NaN one is 1 quality per point).
        let scale = Double(top) / 100
        let (flattest, steepest) = (0.2 * scale, 10 * scale)
        var level = min(top, max(1, initialLevel))
        while tries.count < maximumTries {
            let score = try evaluate(level)
            tries.append(Try(level: level, score: score))
            let passing = tries.filter { $0.score >= target }.min { $0.level < $1.level }
            let failing = tries.filter { !($0.score >= target) }.max { $0.level < $1.level }
            let upper = passing?.level ?? top + 1      // lowest known to pass (top + 1: none yet)
            let lower = failing?.level ?? 0            // highest known to fail (0: none yet)
            if upper - lower <= tolerance || upper == 1 || (passing == nil && lower == top) { break }
            let middle = lower + (upper - lower + 1) / 2
            // Only finite scores measure a distance to the target (and a slope).
            let measured = tries.filter { $0.score.isFinite }
            // The slope: the secant through the bracketing tries when both exist, else through the two tries
            // nearest the target (a curve flatter or steeper than the model's), else the model's.
            var perPoint = slope.isNaN ? scale : min(steepest, max(flattest, slope))
            let pair: (Try, Try)?
            if let p = passing, let f = failing, p.score.isFinite, f.score.isFinite {
                pair = (p, f)
            } else if measured.count >= 2 {
                let near = measured.sorted { abs($0.score - target) < abs($1.score - target) }
                pair = (near[0], near[1])
            } else {
                pair = nil
            }
            if let (a, b) = pair, abs(a.score - b.score) > 0.25 {
                let secant = Double(a.level - b.level) / (a.score - b.score)
                if secant > 0 { perPoint = min(steepest, max(flattest, secant)) }
            }
            let bracketed = passing != nil && failing != nil
            let isLastTry = tries.count == maximumTries - 1
            var q = middle
            // Step from the try nearest the target (with no finite score to step from: the middle).
            if let last = measured.min(by: { abs($0.score - target) < abs($1.score - target) }) {
                var next = Double(last.level) + perPoint * (target - last.score)
                // Until a passing and a failing try bracket the answer, aim a point of score above the target when
                // climbing (a miss costs a try; on a plateau the secant is steep, so this jumps over it), exactly at
                // it when descending. Inside a bracket aim at the target: a miss narrows the bracket too, and a
                // point above lands next to its passing end, which then crawls down one level a try (a grid of 400
                // levels ended 6–18 levels above the answer). The last try inside a bracket aims half a point
                // above: if it misses, the answer is the bracket's passing end, which may be far above (a 1200 px
                // JPEG: 87 missed by 0.3 point after 86, and 96 was served at twice the bytes of 88).
                if last.score < target {
                    if bracketed, isLastTry {
                        // The last try steps from a miss by the steeper of the secant and the model's slope: a
                        // wide bracket's secant runs through the curve's steep top (more score per level), so it
                        // underestimates the levels a point costs just above the miss, and a miss here serves the
                        // bracket's passing end. Seen: kodak_23 at 300×200, JPEG 4:4:4 at 70: 71 (68.1) missed,
                        // 100 passed (94.2), the secant's 1.1 levels a point aimed at 74, which scored 69.8, and
                        // 100 was served in 71 KB where 76 passes in 13 KB; the model's 1.7 aims at 76.
                        let model = slope.isNaN ? scale : min(steepest, max(flattest, slope))
                        let step = max(perPoint, model)
                        next = Double(last.level) + step * (target - last.score) + step / 2
                    } else if !bracketed {
                        next += perPoint + 1
                    }
                }
                q = Self.level(next, above: lower, below: upper, otherwise: middle)
            }
            // When the last two tries fell on the same side of the target, the estimate is creeping toward the
            // answer from one end (regula falsi's weakness on a curved score): take the bracket's middle instead.
            if bracketed, !isLastTry, tries.count >= 2,
               (tries[tries.count - 1].score >= target) == (tries[tries.count - 2].score >= target) {
                q = middle
            }
            q = min(upper - 1, max(lower + 1, q))
            q = min(top, max(1, q))
            if tries.contains(where: { $0.level == q }) { break }
            level = q
        }
        let best = tries.filter { $0.score >= target }.min { $0.level < $1.level }
        return Outcome(level: best?.level, tries: tries)
    }

    /// `estimate` rounded up to a level strictly between `lower` and `upper` (or at the nearer of `lower + 1` and
    /// `upper - 1`), clamped in `Double` before it becomes an `Int` (a NaN, infinite or huge estimate trapped in
    /// `Int(_:)`); `otherwise` for NaN.
    static func level(_ estimate: Double, above lower: Int, below upper: Int, otherwise: Int) -> Int {
        guard !estimate.isNaN else { return otherwise }
        let x = estimate.rounded(.up)
        if x <= Double(lower + 1) { return lower + 1 }
        if x >= Double(upper - 1) { return upper - 1 }
        return Int(x)
    }
}
