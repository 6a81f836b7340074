import Foundation

/// Fixed-point filter weights for resampling one axis from `sourceCount` to `destinationCount` samples.
///
/// For destination sample `i`, source samples `start[i] ..< start[i] + length[i]` contribute with
/// `weights[i * stride + k]`. Weights are integers scaled by `2^fractionBits` and sum to exactly
/// `2^fractionBits` for every destination sample, so a solid colour stays exactly solid.
///
/// Coordinates: destination sample `i` covers source interval `[i, i + 1) × scale` (pixel centres at
/// half-integers), the convention of libvips, Pillow and ImageMagick.
///
/// Immutable after init, so one table is shared by every resampler of the same geometry (`cached(…)`),
/// on any thread.
final class ResampleWeights: @unchecked Sendable {
    /// Weights are scaled by `2^fractionBits`. 20 bits keep a shrink by thousands (area averaging has no
    /// prefilter) accurate, while the vertical sums stay in Int32: 255 × 2^20 × (sum of |weights| < 2)
    /// < 2^31; the horizontal pass sums in Int64.
    static let fractionBits = 20

    let destinationCount: Int
    /// Distance between the weight lists of consecutive destination samples.
    let stride: Int
    let start: UnsafeMutablePointer<Int>
    let length: UnsafeMutablePointer<Int>
    let weights: UnsafeMutablePointer<Int32>

    /// - Parameter blockFactor: when a `BoxPrefilter` averaged blocks of this many source samples first, the
    ///   weights apply to those block averages: each block is weighed at its true centre and by its true size
    ///   (the last block may be narrower), in source coordinates, so the geometry stays exact. Default 1.
    /// - Parameter sourceExtent: how many source samples the image really spans, when its last sample stands for
    ///   only part of one (`sourceCount - 1 < sourceExtent <= sourceCount`): a JPEG decoded at 1/d by DCT scaling
    ///   is `ceil(side / d)` samples for `side / d` of picture. The destination maps onto `[0, sourceExtent)`, so
    ///   detail lands where a resize of the full-size image puts it. Default `nil`: `sourceCount`.
    /// - Throws: `ImageProcessingError.invalidSize` when the tables would be unreasonably large.
    init(sourceCount: Int, destinationCount: Int, filter: ResamplingFilter, blockFactor: Int = 1,
         sourceExtent: Double? = nil) throws {
        precondition(sourceCount > 0 && destinationCount > 0 && blockFactor > 0)
        let f = blockFactor
        let samples = (sourceCount + f - 1) / f
        let extent = Self.extent(sourceExtent, sourceCount: sourceCount)
        let scale = extent / Double(destinationCount)
        let filterScale = max(scale, 1)
        // Enlarging with area averaging is bilinear.
        let kernel: ResamplingFilter = (filter == .area && scale < 1) ? .triangle : filter
        let exactArea = filter == .area && scale >= 1 && f == 1
        let support = exactArea ? scale / 2 : kernel.support * filterScale
        let taps = min(Int(ceil(support * 2 / Double(f))) + 3, samples)
        let (total, overflow) = taps.multipliedReportingOverflow(by: destinationCount)
        // 1 GiB of weights at most (a source over ~40 million pixels wide); calloc so failure is an error.
        guard !overflow, total <= 1 << 28 else {
            throw ImageProcessingError.invalidSize(width: destinationCount, height: sourceCount)
        }
        // One block: starts, lengths, then weights.
        let bytes = destinationCount * 16 + total * 4
        guard let block = calloc(bytes, 1) else { throw ImageCodecError.allocationFailed(byteCount: bytes) }
        self.destinationCount = destinationCount
        self.stride = taps
        start = block.bindMemory(to: Int.self, capacity: destinationCount * 2)
        length = start + destinationCount
        weights = (block + destinationCount * 16).bindMemory(to: Int32.self, capacity: total)

        var scratch = [Double](repeating: 0, count: taps)
        let one = Double(1 << Self.fractionBits)
        for i in 0..<destinationCount {
            let center = (Double(i) + 0.5) * scale
            var first = max(0, Int(floor((center - support) / Double(f))))
            let last = min(samples - 1, Int(ceil((center + support) / Double(f))))
            var count = 0
            var sum = 0.0
            var j = first
            while j <= last && count < taps {
                let w: Double
                if exactArea {
                    // Exact overlap of source pixel [j, j+1) with [i, i+1) × scale.
                    let lo = Double(i) * scale, hi = Double(i + 1) * scale
                    w = max(0, min(hi, Double(j + 1)) - max(lo, Double(j)))
                } else {
                    // Block j covers source samples [j·f, min((j+1)·f, n)).
                    let lo = Double(j * f), hi = Double(min((j + 1) * f, sourceCount))
                    w = kernel.weight(((lo + hi) / 2 - center) / filterScale) * (hi - lo) / Double(f)
                }
                if count == 0 && w == 0 { first += 1; j += 1; continue } // trim leading zeros
                scratch[count] = w
                sum += w
                count += 1
                j += 1
            }
            while count > 1 && scratch[count - 1] == 0 { count -= 1 } // trim trailing zeros
            if count == 0 || sum == 0 {
                // Cannot happen for the kernels above; fall back to the nearest sample.
                first = min(samples - 1, max(0, Int(center) / f))
                scratch[0] = 1; sum = 1; count = 1
            }
            // Quantise the running sum, not each weight: every weight is off by less than one unit, the errors
            // do not pile up on one sample, and the weights sum to exactly 2^fractionBits.
            let row = weights + i * taps
            var cumulative = 0.0
            var previous = 0
            for k in 0..<count {
                cumulative += scratch[k] / sum
                let q = k == count - 1 ? 1 << Self.fractionBits : Int((cumulative * one).rounded())
                row[k] = Int32(truncatingIfNeeded: q - previous)
                previous = q
            }
            start[i] = first
            length[i] = count
        }
    }

    deinit { free(start) }

    /// `sourceExtent` when it is a valid partial span of `sourceCount` samples, else `sourceCount`.
    static func extent(_ sourceExtent: Double?, sourceCount: Int) -> Double {
        guard let sourceExtent, sourceExtent.isFinite, sourceExtent > Double(sourceCount - 1),
              sourceExtent < Double(sourceCount) else { return Double(sourceCount) }
        return sourceExtent
    }
}
