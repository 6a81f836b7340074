@testable import ImageCodec
import TestSupport
import XCTest

/// Review of the grid search (commit 7bc9d31): `QualitySearch` on randomized curves over grids of 1…400 levels and
/// beyond, with hostile evaluators, slopes, targets and first guesses. Whatever the input, the search must try at
/// most `maximumTries` levels, never one twice, only levels in 1…`levels`, return only the lowest level it
/// measured passing, stop early only when its bracket is closed, and never trap.
final class Review19QualitySearchTests: XCTestCase {
    /// One randomized case: a curve, a target, a grid and the search's parameters.
    private struct Case: CustomStringConvertible {
        var curve: String
        var levels: Int
        var target: Double
        var initial: Int
        var slope: Double
        var tries: Int
        var tolerance: Int
        var description: String {
            "curve \(curve), levels \(levels), target \(target), initial \(initial), slope \(slope), tries \(tries), tolerance \(tolerance)"
        }
    }

    /// Draws a curve over `levels`: monotone (linear, concave), stepped (libjpeg-like plateaus), noisy and
    /// non-monotone, flat, and any of them with some levels scoring NaN or ±infinity.
    private static func curve(_ random: inout SplitMix64, levels: Int) -> (String, (Int) -> Double) {
        func unit(_ r: inout SplitMix64) -> Double { Double(r.next() >> 11) / Double(1 << 53) }
        let low = unit(&random) * 60 - 20, high = low + unit(&random) * 110
        let n = Double(max(levels, 1))
        let base: (String, (Int) -> Double)
        switch random.next(upTo: 5) {
        case 0: base = ("linear \(low)…\(high)", { low + (high - low) * Double($0) / n })
        case 1:
            let k = 0.5 + unit(&random) * 6
            base = ("concave \(low)…\(high) k \(k)", { low + (high - low) * (1 - exp(-k * Double($0) / n)) / (1 - exp(-k)) })
        case 2:
            let step = 1 + random.next(upTo: max(1, levels / 5))
            base = ("stepped \(step)", { low + (high - low) * Double(($0 / step) * step) / n })
        case 3:
            let seed = random.next()
            base = ("noisy \(seed)", { level in
                var r = SplitMix64(seed: seed &+ UInt64(truncatingIfNeeded: level))
                return low + (high - low) * Double(level) / n + (unit(&r) - 0.5) * 8
            })
        default: base = ("flat \(low)", { _ in low })
        }
        guard random.next(upTo: 3) == 0 else { return base }
        let specials: [Double] = [.nan, .infinity, -.infinity]
        let special = specials[random.next(upTo: 3)]
        let every = 1 + random.next(upTo: 4)
        return (base.0 + " with \(special) every \(every)", { level in level % every == 0 ? special : base.1(level) })
    }

    /// Checks one run of `search` on `curve` against every rule of the search's contract.
    @discardableResult
    private func check(_ search: QualitySearch, curve: (Int) -> Double, _ label: @autoclosure () -> String) -> QualitySearch.Outcome {
        var calls: [Int] = []
        let outcome = search.run { level -> Double in
            calls.append(level)
            return curve(level)
        }
        let top = max(1, search.levels)
        XCTAssertLessThanOrEqual(calls.count, max(0, search.maximumTries), label())
        XCTAssertEqual(Set(calls).count, calls.count, "a level tried twice: \(calls); \(label())")
        XCTAssertTrue(calls.allSatisfy { (1...top).contains($0) }, "a level outside 1…\(top): \(calls); \(label())")
        XCTAssertEqual(outcome.tries.map(\.level), calls, label())
        let passing = outcome.tries.filter { $0.score >= search.target }
        XCTAssertEqual(outcome.level, passing.map(\.level).min(), "not the lowest measured passing level; \(label())")
        // Stopping before the budget is spent is allowed only when nothing is left to learn: a closed bracket,
        // level 1 passing, or the top level failing with nothing passing.
        if !calls.isEmpty, calls.count < search.maximumTries {
            let upper = passing.map(\.level).min() ?? (top == Int.max ? top : top + 1)
            let lower = outcome.tries.filter { !($0.score >= search.target) }.map(\.level).max() ?? 0
            XCTAssertTrue(upper - lower <= max(search.tolerance, 1) || upper == 1 || (passing.isEmpty && lower == top),
                          "stopped at \(calls.count) tries with an open bracket (\(lower), \(upper)): \(outcome.tries); \(label())")
        }
        return outcome
    }

    /// 20 000 random cases (seed printed on failure): grids of 1, 2, 63, 100 and 400 levels, targets anywhere in
    /// 0…100 (0 and 100 included), first guesses from far below 1 to far above the top, slopes from 0 and negative
    /// to huge, tolerance 0…3, 0…8 tries, curves monotone, stepped, noisy, flat, and with NaN or infinite scores.
    func testRandomCurvesKeepTheContract() {
        let seed = UInt64(0x5EED_0019)
        var random = SplitMix64(seed: seed)
        let grids = [1, 2, 63, 100, 400]
        let slopes: [Double] = [0, -1, -1e300, 1e-300, 1e300, .infinity, -.infinity, .nan, 0.2, 1, 1.6, 4.5, 12]
        let initials = [Int.min, -1_000_000, -1, 0, 1, 2, 50, 62, 63, 64, 99, 100, 101, 399, 400, 401, 1_000_000, Int.max]
        var (tried, chosen, nonFinite) = (0, 0, 0)
        for index in 0..<20_000 {
            let levels = grids[random.next(upTo: grids.count)]
            let (name, curve) = Self.curve(&random, levels: levels)
            let target: Double = switch random.next(upTo: 6) {
            case 0: 0
            case 1: 100
            default: Double(random.next(upTo: 10_001)) / 100
            }
            let initial = random.next(upTo: 2) == 0 ? initials[random.next(upTo: initials.count)] : 1 + random.next(upTo: levels)
            let slope = random.next(upTo: 2) == 0 ? slopes[random.next(upTo: slopes.count)]
                : (0.2 + Double(random.next(upTo: 500)) / 100) * Double(levels) / 100
            let c = Case(curve: name, levels: levels, target: target, initial: initial, slope: slope,
                         tries: random.next(upTo: 9), tolerance: random.next(upTo: 4))
            var search = QualitySearch(target: c.target, initialLevel: c.initial, slope: c.slope)
            search.levels = c.levels
            search.maximumTries = c.tries
            search.tolerance = c.tolerance
            let outcome = check(search, curve: curve, "seed \(seed) case \(index): \(c)")
            tried += outcome.tries.count
            chosen += outcome.level == nil ? 0 : 1
            nonFinite += outcome.tries.contains { !$0.score.isFinite } ? 1 : 0
        }
        print("Review19: 20 000 searches, \(tried) tries, \(chosen) chose a level, \(nonFinite) met a NaN or infinite score")
        XCTAssertGreaterThan(chosen, 5_000, "the cases exercise successful searches")
        XCTAssertGreaterThan(nonFinite, 1_000, "the cases exercise non-finite scores")
    }

    /// An evaluator's first score NaN or infinite (a metric that broke on one candidate) does not trap the step
    /// computed from it (`Int(_:)` of a NaN or infinite estimate): the search goes on, or stops, by the rules.
    func testNonFiniteScoresDoNotTrap() {
        for special in [Double.nan, .infinity, -.infinity] {
            for levels in [2, 63, 100, 400] {
                for initial in [1, levels / 2, levels - 1] {
                    var search = QualitySearch(target: 70, initialLevel: initial, slope: 1.2 * Double(levels) / 100)
                    search.levels = levels
                    search.maximumTries = 6
                    search.tolerance = 1
                    check(search, curve: { $0 == initial ? special : 100 * Double($0) / Double(levels) },
                          "\(special) at \(initial) of \(levels)")
                }
            }
        }
    }

    /// A target the search cannot compare with (NaN, ±infinity, or a huge one; `QualityTarget.minimumScore` could be
    /// set to any of them) does not trap: nothing passes a NaN or +∞ target, everything passes −∞.
    func testNonFiniteAndHugeTargetsDoNotTrap() {
        for target in [Double.nan, .infinity, -.infinity, 1e300, -1e300] {
            for initial in [1, 50, 99] {
                let search = QualitySearch(target: target, initialLevel: initial, slope: 1.2)
                check(search, curve: { 20 + 0.8 * Double($0) }, "target \(target) from \(initial)")
            }
        }
    }

    /// A model slope that is NaN, infinite or huge (levels per point) does not trap the first step.
    func testNonFiniteAndHugeSlopesDoNotTrap() {
        for slope in [Double.nan, .infinity, -.infinity, 1e300, -1e300, Double.greatestFiniteMagnitude] {
            for initial in [1, 40, 99] {
                let search = QualitySearch(target: 70, initialLevel: initial, slope: slope)
                check(search, curve: { 20 + 0.8 * Double($0) }, "slope \(slope) from \(initial)")
            }
        }
    }

    /// A grid as large as `Int` allows (no real format has one, but nothing in the type forbids it): the sentinel
    /// "no passing level yet" (`levels + 1`) and the bracket's middle do not overflow.
    func testHugeGridDoesNotOverflow() {
        for levels in [Int.max, Int.max - 1, 1 << 62] {
            for tolerance in [0, 2, Int.max] {
                var search = QualitySearch(target: 70, initialLevel: levels / 3, slope: 1)
                search.levels = levels
                search.tolerance = tolerance
                check(search, curve: { Double($0) / Double(levels) * 100 }, "levels \(levels) tolerance \(tolerance)")
            }
        }
    }
}
