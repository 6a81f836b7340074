import Foundation

/// The reconstruction filter a resize uses. Every filter's support is widened by the shrink factor when
/// shrinking, so shrinking never aliases; when enlarging the support is the filter's own. Shrinking an axis
/// by 8 or more with a filter other than `.area` averages pixel blocks first (see `RowResampler`), so every
/// filter costs about the same for thumbnails.
///
/// - Important: A value type; thread-safe.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Area averaging: when shrinking, each destination pixel is the average of the source pixels it covers,
    /// weighted by their exact fractional coverage (a box filter). Enlarging is bilinear. The fastest filter;
    /// a little softer than `lanczos3`.
    case area
    /// Triangle (tent) filter: bilinear interpolation when enlarging, a tent of width 2 × the shrink factor
    /// when shrinking. Smooth; no ringing.
    case triangle
    /// Mitchell–Netravali cubic (B = C = 1/3), support 2: sharp with very little ringing.
    case mitchell
    /// Lanczos windowed sinc, 3 lobes: the sharpest; slight ringing at hard edges (results are clamped).
    case lanczos3

    /// The filter `resized(width:height:)` and `RowResampler` use when none is given: `.lanczos3`
    /// (what libvips' `thumbnail` uses).
    public static let `default`: ResamplingFilter = .lanczos3

    /// Half-width of the kernel in source pixels at scale 1.
    var support: Double {
        switch self {
        case .area: return 0.5
        case .triangle: return 1
        case .mitchell: return 2
        case .lanczos3: return 3
        }
    }

    /// The kernel's value at distance `x` (in filter units).
    func weight(_ x: Double) -> Double {
        let t = abs(x)
        switch self {
        case .area:
            return t < 0.5 ? 1 : (t == 0.5 ? 0.5 : 0)
        case .triangle:
            return t < 1 ? 1 - t : 0
        case .mitchell:
            // B = C = 1/3 (Mitchell & Netravali 1988), coefficients pre-divided by 6.
            let b = 1.0 / 3.0, c = 1.0 / 3.0
            if t < 1 {
                return ((12 - 9 * b - 6 * c) * t * t * t + (-18 + 12 * b + 6 * c) * t * t + (6 - 2 * b)) / 6
            } else if t < 2 {
                return ((-b - 6 * c) * t * t * t + (6 * b + 30 * c) * t * t + (-12 * b - 48 * c) * t + (8 * b + 24 * c)) / 6
            }
            return 0
        case .lanczos3:
            if t < 1e-9 { return 1 }
            if t >= 3 { return 0 }
            let px = Double.pi * t
            return 3 * sin(px) * sin(px / 3) / (px * px)
        }
    }
}
