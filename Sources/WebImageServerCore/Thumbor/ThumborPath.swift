/// One thumbor URL path, split into its parts exactly as thumbor 7.8 splits it (libthumbor's `Url.regex()`):
/// `/(unsafe|SIGNATURE)/[debug/][meta/][trim[:top-left|:bottom-right][:N]/][AxB:CxD/]`
/// `[[adaptive-][full-]fit-in/][-][W|orig]x[-][H|orig]/[left|right|center/][top|bottom|middle/][smart/]`
/// `[filters:NAME(ARGS)[:NAME(ARGS)…]/]IMAGE`.
///
/// Every part is optional and matched greedily, backtracking as Python's `re` does when what follows would leave
/// no image (`/unsafe/300x200/` has the image `300x200/`). Each part is percent-decoded once after matching, as
/// Tornado decodes its route groups; `signedPart` stays as it came, since the signature covers the raw path.
///
/// ```swift
/// let path = try ThumborPath(parsing: "/unsafe/fit-in/300x200/filters:quality(70)/images.example/a.jpg")
/// path.fitIn            // .fitIn
/// path.width            // .pixels(300)
/// path.filters          // "quality(70)"
/// path.imageURL         // "http://images.example/a.jpg"
/// ```
///
/// - Important: A value type; thread-safe.
public struct ThumborPath: Sendable, Hashable {
    /// How the URL is authorised: its first part.
    public enum Security: Sendable, Hashable {
        /// `unsafe/`: no signature.
        case unsafe
        /// A signature: URL-safe base64 of the HMAC-SHA1 of `signedPart` (percent-decoded twice, as thumbor).
        case signature(String)
        /// Neither (thumbor answers 400).
        case none
    }

    /// A requested width or height.
    public enum Dimension: Sendable, Hashable {
        /// A number of pixels; 0 follows the aspect ratio (or the source when both are 0).
        case pixels(Int)
        /// `orig`: the (cropped) source's own.
        case original
    }

    /// The fit-in variant.
    public enum FitIn: String, Sendable, Hashable {
        /// `fit-in`: inside the box, never cropped, never scaled up.
        case fitIn = "fit-in"
        /// `full-fit-in`: the box inside the image (one side is the box's), never cropped.
        case fullFitIn = "full-fit-in"
        /// `adaptive-fit-in`: `fit-in`, the box turned to the source's orientation.
        case adaptiveFitIn = "adaptive-fit-in"
        /// `adaptive-full-fit-in`.
        case adaptiveFullFitIn = "adaptive-full-fit-in"
    }

    /// Horizontal alignment of the crop.
    public enum HorizontalAlignment: String, Sendable, Hashable { case left, center, right }
    /// Vertical alignment of the crop.
    public enum VerticalAlignment: String, Sendable, Hashable { case top, middle, bottom }

    /// `unsafe`, a signature, or neither.
    public var security: Security = .none
    /// The raw path after `/SIGNATURE/` (or after `/unsafe/`), as received: what a signature covers.
    public var signedPart: String = ""
    /// `debug/`.
    public var isDebug = false
    /// `meta/`.
    public var isMeta = false
    /// `trim…/` as written (`trim`, `trim:bottom-right:10`), or `nil`.
    public var trim: String?
    /// `AxB:CxD/`: left, top, right, bottom; `nil` when absent or all zero (thumbor's `should_crop`).
    public var crop: SourceCrop?
    /// The fit-in variant, or `nil` for a crop to the box.
    public var fitIn: FitIn?
    /// The width (0 when absent).
    public var width: Dimension = .pixels(0)
    /// The height (0 when absent).
    public var height: Dimension = .pixels(0)
    /// `-W`: mirror left-right.
    public var flipsHorizontally = false
    /// `x-H`: mirror top-bottom.
    public var flipsVertically = false
    /// `left/`, `right/`, `center/` (default `center`).
    public var horizontalAlignment: HorizontalAlignment = .center
    /// `top/`, `bottom/`, `middle/` (default `middle`).
    public var verticalAlignment: VerticalAlignment = .middle
    /// `smart/`.
    public var isSmart = false
    /// The text of `filters:…/` without its prefix, percent-decoded (empty when absent).
    public var filters = ""
    /// The image part, percent-decoded once (as thumbor's route group is).
    public var image = ""

    /// The longest path parsed: 16 KiB (a longer one is refused before matching).
    public static let maximumLength = 16 << 10

    /// Parses `rawPath` (the request's path, still percent-encoded, without the query), as thumbor's route does
    /// (with the `unsafe|SIGNATURE` part).
    ///
    /// - Throws: `ImageServiceError.badOptions` when the path has no image part, is longer than
    ///   `maximumLength`, a part does not percent-decode to UTF-8, or a number is out of range.
    public init(parsing rawPath: String) throws(ImageServiceError) {
        let bytes = Array(rawPath.utf8)
        guard bytes.count <= Self.maximumLength else { throw .badOptions("path longer than \(Self.maximumLength) bytes") }
        var matcher = ThumborGrammar(bytes: bytes)
        guard matcher.match(part: 0, at: 0) else {
            throw .badOptions("no original image was specified in the given URL")
        }
        try self.init(bytes: bytes, spans: matcher.spans)
    }

    private init(bytes: [UInt8], spans: [Range<Int>?]) throws(ImageServiceError) {
        func text(_ part: ThumborGrammar.Part, dropFirst: Int = 0, dropLast: Int = 1) -> String? {
            guard let span = spans[part.rawValue] else { return nil }
            return String(decoding: bytes[(span.lowerBound + dropFirst)..<(span.upperBound - dropLast)], as: UTF8.self)
        }
        if let hashSpan = spans[ThumborGrammar.Part.security.rawValue] {
            let segment = String(decoding: bytes[hashSpan.lowerBound..<(hashSpan.upperBound - 1)], as: UTF8.self)
            if segment == "unsafe" {
                security = .unsafe
            } else {
                let once = try ThumborPercent.decode(segment, part: "signature")
                security = .signature(try ThumborPercent.decode(once, part: "signature"))
            }
            signedPart = String(decoding: bytes[hashSpan.upperBound...], as: UTF8.self)
        } else {
            signedPart = String(decoding: bytes[(bytes.first == UInt8(ascii: "/") ? 1 : 0)...], as: UTF8.self)
        }
        isDebug = spans[ThumborGrammar.Part.debug.rawValue] != nil
        isMeta = spans[ThumborGrammar.Part.meta.rawValue] != nil
        trim = text(.trim)
        if let box = text(.crop) {
            let numbers = box.split(whereSeparator: { $0 == "x" || $0 == ":" }).map { Self.number(String($0)) }
            guard numbers.count == 4, let l = numbers[0], let t = numbers[1], let r = numbers[2], let b = numbers[3] else {
                throw .badOptions("crop: a coordinate is too large")
            }
            if l > 0 || t > 0 || r > 0 || b > 0 { crop = SourceCrop(left: l, top: t, right: r, bottom: b) }
        }
        if let fit = text(.fitIn) { fitIn = FitIn(rawValue: fit) }
        if let dims = text(.dimensions) {
            let x = dims.firstIndex(of: "x")!
            var w = Substring(dims[..<x]), h = Substring(dims[dims.index(after: x)...])
            if w.hasPrefix("-") { flipsHorizontally = true; w = w.dropFirst() }
            if h.hasPrefix("-") { flipsVertically = true; h = h.dropFirst() }
            width = try Self.dimension(w, name: "width")
            height = try Self.dimension(h, name: "height")
        }
        if let h = text(.horizontalAlignment) { horizontalAlignment = HorizontalAlignment(rawValue: h) ?? .center }
        if let v = text(.verticalAlignment) { verticalAlignment = VerticalAlignment(rawValue: v) ?? .middle }
        isSmart = spans[ThumborGrammar.Part.smart.rawValue] != nil
        if let raw = text(.filters, dropFirst: 8) { filters = try ThumborPercent.decode(raw, part: "filters") }
        image = try ThumborPercent.decode(text(.image, dropLast: 0) ?? "", part: "image")
    }

    private static func number(_ digits: String) -> Int? {
        // Leading zeros are digits like any other; only the value's size is bounded.
        let trimmed = digits.drop { $0 == "0" }
        guard trimmed.count <= 18 else { return nil }
        return trimmed.isEmpty ? 0 : Int(trimmed)
    }

    private static func dimension(_ text: Substring, name: String) throws(ImageServiceError) -> Dimension {
        if text.isEmpty { return .pixels(0) }
        if text == "orig" { return .original }
        guard let value = number(String(text)), value <= ImageRequestOptions.maximumDimension else {
            throw .badOptions("\(name): expected at most \(ImageRequestOptions.maximumDimension)")
        }
        return .pixels(value)
    }

    /// The source URL thumbor's HTTP loader fetches for `image`: percent-encoded once more where it holds no
    /// escape (`quote` with thumbor's safe set), `http://` prepended when it does not start with `http`.
    public var imageURL: String {
        var url = image
        if (try? ThumborPercent.decode(url, part: "image")) == url {
            url = ThumborPercent.quote(url, safe: "~@#$&()*!+=:;,.?/'")
        }
        return url.hasPrefix("http") ? url : "http://" + url
    }
}
