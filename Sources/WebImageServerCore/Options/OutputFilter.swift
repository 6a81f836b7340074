import ImageCodec

/// One operation on the shaped output, run in the order given (thumbor's post-transform filters; see
/// `ThumborFilterParser` for the spelling of each).
///
/// - Important: A value type; thread-safe.
public enum OutputFilter: Sendable, Hashable {
    /// A Gaussian blur of standard deviation `sigma` output pixels (thumbor's `blur(radius, sigma)`, its
    /// truncated kernel turned into the standard deviation it really has).
    case blur(sigma: Double)
    /// Pad the output to the requested box (or its own size where none was asked), centred, on `fill`
    /// (thumbor's `fill(color, fill_transparent)`); `blendsTransparent` composites it over the fill instead of
    /// copying its transparent pixels.
    case fill(FillStyle, blendsTransparent: Bool)
    /// Composite the output over a solid colour (thumbor's `background_color(color)`).
    case backgroundColor(RGBA)
    /// Scale the output up to fit the requested box when it is smaller on both sides (thumbor's `upscale()`).
    case upscale
    /// Scale the output by `factor` (0 < factor ≤ 1), sizes truncated (thumbor's `proportion(factor)`).
    case proportion(Double)
    /// Luma only, by ITU-R 601 weights (thumbor's `grayscale()`, PIL's `L`).
    case grayscale
    /// Turn the output counter-clockwise by `degrees` (90, 180 or 270), as thumbor's `rotate` (PIL's) turns.
    case rotate(degrees: Int)
    /// Round the corners with ellipse radii `a` × `b`, painting outside them `color` or transparency
    /// (thumbor's `round_corner(a|b, r, g, b, transparent)`).
    case roundCorner(a: Int, b: Int, color: RGBA, transparent: Bool)
    /// thumbor's `sharpen(amount, radius, luminance_only)`: its wavelet sharpen (`ThumborSharpen`), alpha kept.
    case sharpen(amount: Double, radius: Double, luminanceOnly: Bool)
    /// Add `percent` of 255 to each channel (thumbor's `brightness`).
    case brightness(percent: Int)
    /// Scale the distance from mid-grey (thumbor's `contrast`).
    case contrast(percent: Int)
    /// Add a percentage of 255 to each of red, green and blue (thumbor's `rgb(r, g, b)`).
    case rgb(red: Int, green: Int, blue: Int)
    /// Draw another image on the output (thumbor's `watermark(url, x, y, alpha, w_ratio, h_ratio)`); its source
    /// is loaded as the main one is (same source policy, limits and caches).
    case watermark(ThumborWatermark)

    /// The spelling in `canonicalProcessing` (part of the result-cache key).
    public var canonicalName: String {
        switch self {
        case .blur(let sigma): return "blur(\(sigma))"
        case .fill(let style, let blends): return "fill(\(style.canonicalName),\(blends ? 1 : 0))"
        case .backgroundColor(let c): return "background(\(c.r),\(c.g),\(c.b),\(c.a))"
        case .upscale: return "upscale"
        case .proportion(let factor): return "proportion(\(factor))"
        case .grayscale: return "grayscale"
        case .rotate(let degrees): return "rotate(\(degrees))"
        case .roundCorner(let a, let b, let c, let transparent):
            return "round(\(a),\(b),\(c.r),\(c.g),\(c.b),\(transparent ? 1 : 0))"
        case .sharpen(let amount, let radius, let luma): return "sharpen(\(amount),\(radius),\(luma ? 1 : 0))"
        case .brightness(let p): return "brightness(\(p))"
        case .contrast(let p): return "contrast(\(p))"
        case .rgb(let r, let g, let b): return "rgb(\(r),\(g),\(b))"
        case .watermark(let watermark): return watermark.canonicalName
        }
    }
}

/// What `OutputFilter.fill` pads with.
///
/// - Important: A value type; thread-safe.
public enum FillStyle: Sendable, Hashable {
    /// A solid colour (alpha 255, or 0 for `transparent`).
    case color(RGBA)
    /// The median colour of the output's pixels, per channel (thumbor's `fill(auto)`).
    case auto
    /// The output itself, blurred and stretched to the box (thumbor's `fill(blur)`).
    case blur

    /// The spelling in `canonicalProcessing`.
    public var canonicalName: String {
        switch self {
        case .color(let c): return "\(c.r),\(c.g),\(c.b),\(c.a)"
        case .auto: return "auto"
        case .blur: return "blur"
        }
    }
}
