import Foundation

/// The three box filters that approximate a Gaussian of standard deviation `sigma`, and the arithmetic they
/// share (W3C filter effects / Ivan Kutskir's "fastest Gaussian blur": box widths chosen so the three passes
/// have exactly the Gaussian's variance, all odd so every box is centred).
struct BoxBlurPlan {
    /// Half-widths of the three boxes: box `k` averages `2 * radii[k] + 1` samples.
    let radii: [Int]

    init(sigma: Double) {
        let passes = 3.0
        let variance = 12 * sigma * sigma
        var lower = Int(sqrt(variance / passes + 1))
        if lower % 2 == 0 { lower -= 1 }
        let l = Double(lower)
        let upper = lower + 2
        let lowerCount = Int(((variance - passes * l * l - 4 * passes * l - 3 * passes) / (-4 * l - 4)).rounded())
        radii = (0..<3).map { ($0 < lowerCount ? lower : upper) / 2 }
    }

    /// Whether every box is one sample wide (the blur is the identity).
    var isIdentity: Bool { radii.allSatisfy { $0 == 0 } }

    /// `2^32 / width`, rounded: sums are divided by multiplying with it and shifting right by 32.
    static func reciprocal(width: Int) -> Int { ((1 << 32) + width / 2) / width }

    /// Sample index `i` (any integer) mirrored into `0 ..< count`: half-sample symmetric extension
    /// (…, 1, 0 | 0, 1, …, n-1 | n-1, n-2, …), periodic with period `2 * count`. With it a box filter keeps
    /// the total of every row and column, and a solid image stays solid.
    static func mirror(_ i: Int, count: Int) -> Int {
        let period = 2 * count
        var k = i % period
        if k < 0 { k += period }
        return k < count ? k : period - 1 - k
    }

    /// For output `x` in `0 ..< count` of a box of half-width `r`: the index entering the window after `x`
    /// (`mirror(x + r + 1)`) and the one leaving it (`mirror(x - r)`).
    static func slideIndices(count: Int, radius r: Int) -> (entering: [Int], leaving: [Int]) {
        ((0..<count).map { mirror($0 + r + 1, count: count) }, (0..<count).map { mirror($0 - r, count: count) })
    }

    /// How many times each full period (`2 * count` samples, every sample twice) fits in the first window
    /// `-r ... r`, and the `-r ..< -r + remainder` indices left over: the first window's sum is
    /// `periods * 2 * total + Σ remainder`. Keeps the first window O(count) for any radius.
    static func firstWindow(count: Int, radius r: Int) -> (periods: Int, remainder: [Int]) {
        let length = 2 * r + 1
        let period = 2 * count
        return (length / period, (0..<(length % period)).map { mirror($0 - r, count: count) })
    }
}
