import ImageCodec
import Foundation

/// How the output fills the requested box when both `w` and `h` are given.
public enum ImageFit: String, Sendable, Hashable, CaseIterable {
    /// Scale to cover the box, then crop the centre to exactly `w` × `h` (the default; thumbor's crop).
    case cover
    /// Scale to fit inside the box, keeping the aspect ratio (thumbor's fit-in).
    case contain
    /// Stretch to exactly `w` × `h`, ignoring the aspect ratio.
    case fill
    /// Scale to cover the box, keeping the aspect ratio, without cropping: one side is the box's, the other
    /// overhangs it (thumbor's `full-fit-in`; sharp's `outside`).
    case outside
}

/// The output format a request asks for.
public enum RequestedFormat: String, Sendable, Hashable, CaseIterable {
    /// Negotiated from `Accept` and the registered encoders (`FormatNegotiation`): AVIF, then WebP, then JPEG XL
    /// (first with `prefer=jxl`) when listed, else GIF for an animation kept with `anim=1`, PNG for images with
    /// alpha, else JPEG (the default).
    case auto
    /// JPEG.
    case jpeg
    /// PNG.
    case png
    /// WebP (animated with `anim=1` and an animated source).
    case webp
    /// GIF (animated with `anim=1` and an animated source).
    case gif
    /// The source's own format when it is JPEG, PNG, GIF or WebP, else PNG for a source with alpha and JPEG for
    /// one without (`Accept` is not consulted): thumbor's default, where a PNG source stays PNG.
    case original
    /// AVIF (an AVIF sequence with `anim=1` and an animated source); 400 when the installed libavif cannot encode.
    case avif
    /// JPEG XL (animated with `anim=1` and an animated source); a JPEG served at its own size, without blur, is
    /// recompressed losslessly.
    case jxl
}

/// The options of one `/image` request, parsed and validated:
/// `url`, `w`, `h`, `fit=cover|contain|fill|outside`, `format=auto|jpeg|png|webp|gif|avif|jxl|original`, `prefer=jxl`,
/// `q`, `anim=0|1`, `blur`, `gravity`, `fp`, `preset`
/// (and `sig`, checked by `URLSigner`).
///
/// - Important: A value type; thread-safe.
public struct ImageRequestOptions: Sendable, Hashable {
    /// The source image (http or https; other schemes are refused by the service).
    public var source: URL
    /// Output width in pixels, 1…`maximumDimension`; `nil` follows the aspect ratio (or the source size).
    public var width: Int?
    /// Output height in pixels, 1…`maximumDimension`; `nil` follows the aspect ratio (or the source size).
    public var height: Int?
    /// How the output fills a `w` × `h` box. Default `.cover`.
    public var fit: ImageFit = .cover
    /// The output format. Default `.auto`.
    public var format: RequestedFormat = .auto
    /// `prefer=jxl`: `format=auto` tries JPEG XL first for a client that lists `image/jxl`. Default `false` (or
    /// the server's `prefersJXL`).
    public var prefersJXL = false
    /// Lossy quality 1…100 (JPEG, lossy WebP). Default `defaultQuality` (80, as thumbor). With
    /// `automaticQuality`, used only for kept animations (no search runs for them).
    public var quality: Int = ImageRequestOptions.defaultQuality
    /// `q=auto` (`.medium`, SSIMULACRA2 70), `q=auto:low` (60), `q=auto:high` (80) or `q=auto:SCORE` (0…100): the
    /// lowest quality whose output keeps that score against the resized source (`EncodeOptions.automaticQuality`);
    /// any of them with `:predicted` (`q=auto:predicted`): one unscored encode at the predicted quality.
    /// Default `nil` (fixed `quality`), or the server's `--default-quality auto…` when `q` is absent.
    public var automaticQuality: QualityTarget?
    /// Keep an animation (`anim=1`) when the output format animates (GIF, WebP, AVIF, JPEG XL). Default `false`: the first frame.
    public var keepsAnimation = false
    /// With `keepsAnimation`, keep only a GIF source's animation; an animated PNG, WebP, AVIF or JPEG XL source gives
    /// its first frame. thumbor URLs set it: thumbor's PIL engine (`ALLOW_ANIMATED_GIFS`) animates GIFs only.
    /// Default `false`: every animated source is kept.
    public var keepsAnimationOfGIFOnly = false
    /// The JPEG quantisation tables, or `nil` (the default) for `EncodeOptions`' own (Robidoux's). thumbor URLs set
    /// `.annexK`, the tables thumbor's PIL writes, so that `quality(N)` gives thumbor's look and bytes at N.
    public var jpegQuantization: JPEGQuantization?
    /// Gaussian-like blur radius in output pixels, 0 (none, the default) … 100.
    public var blur: Double = 0
    /// Which part a `cover` crop keeps: `gravity=center|north|…|south-west|smart|entropy`, or a focal point
    /// `fp=x,y` (0…1 each). Default `.center`. `gravity` and `fp` exclude each other.
    public var gravity: CropGravity = .center

    /// The border cut away from the (oriented) source before anything else, found on its pixels (thumbor's
    /// `trim`; see `SourceTrim`). Default `nil`.
    public var trim: SourceTrim?
    /// A box cut from the (oriented) source before anything else but `trim`, in source pixels (thumbor's
    /// `AxB:CxD`); clamped to the source (to what `trim` left of it), ignored when empty after clamping. Default `nil`.
    public var sourceCrop: SourceCrop?
    /// Mirror the output left-right (thumbor's `-W`). Default `false`.
    public var flipsHorizontally = false
    /// Mirror the output top-bottom (thumbor's `x-H`). Default `false`.
    public var flipsVertically = false
    /// Whether `.contain` may scale up a source smaller than the box (`/image`: yes; thumbor's `fit-in`: no).
    /// `.cover`, `.fill` and `.outside` always reach the box. Default `true`.
    public var allowsUpscale = true
    /// Swap `w` and `h` when the source's orientation (portrait or landscape) is not the box's (thumbor's
    /// `adaptive-`). Default `false`.
    public var swapsBoxToMatchSource = false
    /// Clamp `w` and `h` to the (oriented, uncropped) source's size (thumbor's `no_upscale()`). Default `false`.
    public var clampsBoxToSource = false
    /// `w` is the (cropped) source's width (thumbor's `origxH`). Default `false`.
    public var widthIsOriginal = false
    /// `h` is the (cropped) source's height (thumbor's `Wxorig`). Default `false`.
    public var heightIsOriginal = false
    /// Boxes of the (oriented) source, in source pixels, whose weighted centre the crop keeps (thumbor's
    /// `focal()`); they override `gravity` (as a focal point) when any lies inside `sourceCrop`. Default none.
    public var focalRegions: [SourceCrop] = []
    /// Operations on the shaped output, in order (thumbor's post-transform filters). Default none.
    public var filters: [OutputFilter] = []
    /// The largest body wanted, in bytes: a JPEG or WebP over it is encoded again at ¾ of the quality until it
    /// fits or the quality falls under 10 (then the first encoding is kept), as thumbor's `max_bytes()`. Default
    /// `nil`.
    public var maxBytes: Int?

    /// The sources of the `watermark` filters, in order (each loaded as `source` is).
    public var watermarkURLs: [URL] {
        filters.compactMap { filter in
            guard case .watermark(let watermark) = filter else { return nil }
            return URL(string: watermark.url)
        }
    }

    /// The default quality: 80.
    public static let defaultQuality = 80
    /// The largest `w` or `h` a request may name: 8192.
    public static let maximumDimension = 8192
    /// The largest `blur` a request may name: 100.
    public static let maximumBlur = 100.0

    /// Makes options for `source` with every other option at its default.
    public init(source: URL) {
        self.source = source
    }

    /// Parses the pairs of a query string (`sig` is skipped; an unknown or repeated name is an error).
    ///
    /// - Throws: `ImageServiceError.badOptions` naming the option.
    public init(pairs: [(name: String, value: String)]) throws(ImageServiceError) {
        var seen = Set<String>()
        var source: URL?
        var parsed = ImageRequestOptions(source: URL(fileURLWithPath: "/"))
        for (name, value) in pairs {
            guard seen.insert(name).inserted else { throw .badOptions("\(name) given more than once") }
            switch name {
            case "sig": continue
            case "url":
                guard let url = URL(string: value), let scheme = url.scheme, !scheme.isEmpty else {
                    throw .badOptions("url: not an absolute URL")
                }
                source = url
            case "w": parsed.width = try Self.integer(value, name: name, in: 1...Self.maximumDimension)
            case "h": parsed.height = try Self.integer(value, name: name, in: 1...Self.maximumDimension)
            case "fit":
                guard let fit = ImageFit(rawValue: value) else {
                    throw .badOptions("fit: expected cover, contain, fill or outside")
                }
                parsed.fit = fit
            case "format":
                guard let format = RequestedFormat(rawValue: value) else {
                    throw .badOptions("format: expected auto, jpeg, png, webp, gif, avif, jxl or original")
                }
                parsed.format = format
            case "prefer":
                guard value == "jxl" else { throw .badOptions("prefer: expected jxl") }
                parsed.prefersJXL = true
            case "q":
                if value.lowercased().hasPrefix("auto") {
                    guard let target = QualityTarget(parameter: value) else {
                        throw .badOptions("q: expected auto, auto:low, auto:medium, auto:high or auto:SCORE (0…100), optionally followed by :predicted")
                    }
                    parsed.automaticQuality = target
                } else {
                    parsed.quality = try Self.integer(value, name: name, in: 1...100)
                }
            case "anim":
                guard value == "0" || value == "1" else { throw .badOptions("anim: expected 0 or 1") }
                parsed.keepsAnimation = value == "1"
            case "blur":
                guard let radius = Self.decimal(value), (0...Self.maximumBlur).contains(radius) else {
                    throw .badOptions("blur: expected a number from 0 to \(Int(Self.maximumBlur))")
                }
                parsed.blur = radius
            case "gravity":
                guard !seen.contains("fp") else { throw .badOptions("gravity: not with fp") }
                switch value {
                case "smart": parsed.gravity = .smart
                case "entropy": parsed.gravity = .entropy
                default:
                    guard let anchor = CropAnchor(rawValue: value) else {
                        throw .badOptions("gravity: expected center, north, south, east, west, north-east, north-west, "
                                          + "south-east, south-west, smart or entropy")
                    }
                    parsed.gravity = .anchor(anchor)
                }
            case "fp":
                guard !seen.contains("gravity") else { throw .badOptions("fp: not with gravity") }
                let parts = value.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let x = Self.decimal(parts[0]), let y = Self.decimal(parts[1]),
                      (0...1).contains(x), (0...1).contains(y) else {
                    throw .badOptions("fp: expected x,y with each from 0 to 1")
                }
                parsed.gravity = .focalPoint(x: x, y: y)
            default:
                throw .badOptions("unknown option \(name.prefix(32))")
            }
        }
        guard let source else { throw .badOptions("url is required") }
        parsed.source = source
        self = parsed
    }

    /// A finite number written with digits, one point, a sign and an exponent only (`Double(_:)` alone reads
    /// `5\u{0}junk` as 5: it stops at a NUL), with −0 read as 0 (one key for one picture).
    static func decimal<Text: StringProtocol>(_ text: Text) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2B || $0 == 0x2D || $0 == 0x65 || $0 == 0x45 }),
              let value = Double(text), value.isFinite else { return nil }
        return value + 0
    }

    private static func integer(_ text: String, name: String, in range: ClosedRange<Int>) throws(ImageServiceError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .badOptions("\(name): expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Every option that shapes the pixels, defaults included, in one fixed spelling (not the source and not
    /// the format): part of the result-cache key.
    public var canonicalProcessing: String {
        "w=\(width.map(String.init) ?? "-")&h=\(height.map(String.init) ?? "-")&fit=\(fit.rawValue)"
            + "&q=\(qualityKey)&anim=\(keepsAnimation ? 1 : 0)&blur=\(blur)&gravity=\(gravity.canonicalName)"
            + thumborProcessing
    }

    /// The quality's part of the key: the fixed quality, or the automatic target's parameter followed by the fixed
    /// quality when that is not the default (an output the target does not apply to, a kept animation say, is
    /// encoded at the fixed quality, and a server's `defaultQuality` gives a request without `q` another one than
    /// an explicit `q=auto`).
    private var qualityKey: String {
        guard let automaticQuality else { return String(quality) }
        return automaticQuality.parameter + (quality == Self.defaultQuality ? "" : "/\(quality)")
    }

    /// The canonical spelling of the options `/image` has no names for (empty when all are at their defaults, so
    /// that the keys of `/image` results are unchanged).
    private var thumborProcessing: String {
        var parts: [String] = []
        if let trim { parts.append("trim=\(trim.canonicalName)") }
        if let sourceCrop { parts.append("crop=\(sourceCrop.canonicalName)") }
        if flipsHorizontally || flipsVertically { parts.append("flip=\(flipsHorizontally ? 1 : 0)\(flipsVertically ? 1 : 0)") }
        if !allowsUpscale { parts.append("upscale=0") }
        if swapsBoxToMatchSource { parts.append("adaptive=1") }
        if clampsBoxToSource { parts.append("clamp=1") }
        if widthIsOriginal || heightIsOriginal { parts.append("orig=\(widthIsOriginal ? 1 : 0)\(heightIsOriginal ? 1 : 0)") }
        if !focalRegions.isEmpty { parts.append("focal=" + focalRegions.map(\.canonicalName).joined(separator: ";")) }
        if !filters.isEmpty { parts.append("filters=" + filters.map(\.canonicalName).joined(separator: ":")) }
        if let maxBytes { parts.append("maxbytes=\(maxBytes)") }
        if keepsAnimationOfGIFOnly { parts.append("animsource=gif") }
        if jpegQuantization == .annexK { parts.append("jpegtables=annexk") }
        return parts.isEmpty ? "" : "&" + parts.joined(separator: "&")
    }
}
