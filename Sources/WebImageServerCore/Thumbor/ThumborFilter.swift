import Foundation
import ImageCodec

/// One filter of a thumbor URL's `filters:` part, parsed and checked.
///
/// Where thumbor drops an unknown or malformed filter without a word, this service answers 400 naming it: a
/// typo must not silently serve something else. The README's migration section lists each difference.
///
/// - Important: A value type; thread-safe.
public enum ThumborFilter: Sendable, Hashable {
    /// `format(jpeg|jpg|png|gif|webp)`.
    case format(RequestedFormat)
    /// `quality(0…100)` (0 is taken as 1).
    case quality(Int)
    /// `no_upscale()`: the box clamped to the source.
    case noUpscale
    /// `strip_icc()`, `strip_exif()`: outputs never carry them here, so nothing to do.
    case strip
    /// `max_bytes(N)`.
    case maxBytes(Int)
    /// `focal(LxT:RxB)`: a box of the source to keep.
    case focal(SourceCrop)
    /// Any filter run on the output in order (blur, fill, background_color, upscale, proportion, grayscale,
    /// rotate, round_corner, sharpen, brightness, contrast, rgb).
    case output(OutputFilter)
    /// A filter thumbor accepts but ignores for these arguments (`rotate(45)`, `proportion(2)`,
    /// `focal` with an empty box): ignored here too.
    case ignored
}

/// The arguments of a `watermark()` filter.
///
/// - Important: A value type; thread-safe.
public struct ThumborWatermark: Sendable, Hashable {
    /// The watermark image's URL (as thumbor's loader takes it: `http://` prepended when missing).
    public var url: String
    /// `x`: pixels from the left (negative: from the right), `Np` percent of the width, `center` or `repeat`.
    public var x: String
    /// `y`, as `x` for the height.
    public var y: String
    /// Transparency 0 (opaque) … 100 (invisible).
    public var alpha: Int
    /// Largest width as a percentage of the image, or `nil`.
    public var widthRatio: Int?
    /// Largest height as a percentage of the image, or `nil`.
    public var heightRatio: Int?

    /// Makes the arguments of a watermark (nothing is checked: `ThumborFilterParser` does).
    public init(url: String, x: String, y: String, alpha: Int, widthRatio: Int?, heightRatio: Int?) {
        (self.url, self.x, self.y, self.alpha, self.widthRatio, self.heightRatio) = (url, x, y, alpha, widthRatio, heightRatio)
    }

    /// The spelling in `canonicalProcessing`.
    public var canonicalName: String {
        "watermark(\(url),\(x),\(y),\(alpha),\(widthRatio.map(String.init) ?? "none"),\(heightRatio.map(String.init) ?? "none"))"
    }
}

/// Parses the `filters:` part of a thumbor URL.
///
/// - Important: Stateless; thread-safe.
public enum ThumborFilterParser {
    /// The most filters one URL may have: 32 (each may fetch a watermark or make a full-size copy).
    public static let maximumCount = 32

    /// The filters of `text` (`NAME(ARGS):NAME(ARGS)…`, split on `):` as thumbor splits it), in order.
    ///
    /// - Throws: `ImageServiceError.badOptions` naming the first unknown or malformed filter.
    public static func parse(_ text: String) throws(ImageServiceError) -> [ThumborFilter] {
        guard !text.isEmpty else { return [] }
        let parts = text.components(separatedBy: "):")
        guard parts.count <= maximumCount else { throw .badOptions("filters: more than \(maximumCount)") }
        var filters: [ThumborFilter] = []
        for (index, var part) in parts.enumerated() {
            if index != parts.count - 1 { part += ")" }
            guard let open = part.firstIndex(of: "("), part.hasSuffix(")") else {
                throw .badOptions("filter \(part.prefix(40)): expected NAME(ARGUMENTS)")
            }
            let name = String(part[..<open])
            let inner = part[part.index(after: open)..<part.index(before: part.endIndex)]
            filters.append(try filter(name: name, arguments: splitArguments(inner)))
        }
        return filters
    }

    /// Arguments split on commas outside single quotes, each trimmed of white space, quotes removed.
    static func splitArguments(_ text: Substring) -> [String] {
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return [] }
        var arguments: [String] = []
        var current = ""
        var quoted = false
        for character in text {
            if character == "'" { quoted.toggle(); continue }
            if character == ",", !quoted {
                arguments.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        arguments.append(current.trimmingCharacters(in: .whitespaces))
        return arguments
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private static func filter(name: String, arguments a: [String]) throws(ImageServiceError) -> ThumborFilter {
        let bad = { (expected: String) -> ImageServiceError in
            .badOptions("filter \(name.prefix(40)): expected \(name.prefix(40))(\(expected))")
        }
        func count(_ range: ClosedRange<Int>, _ expected: String) throws(ImageServiceError) {
            guard range.contains(a.count) else { throw bad(expected) }
        }
        func int(_ text: String, _ expected: String, allowsNegative: Bool = true) throws(ImageServiceError) -> Int {
            let digits = text.hasPrefix("-") && allowsNegative ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.count <= 9,
                  let value = Int(text) else { throw bad(expected) }
            return value
        }
        func decimal(_ text: String, _ expected: String) throws(ImageServiceError) -> Double {
            guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }), let value = Double(text),
                  value.isFinite, abs(value) <= 1e6 else { throw bad(expected) }
            return value
        }
        func bool(_ text: String, _ expected: String) throws(ImageServiceError) -> Bool {
            switch text {
            case "true", "True", "1": return true
            case "false", "False", "0": return false
            default: throw bad(expected)
            }
        }
        switch name {
        case "format":
            try count(1...1, "jpeg|png|gif|webp")
            switch a[0].lowercased() {
            case "jpeg", "jpg": return .format(.jpeg)
            case "png": return .format(.png)
            case "gif": return .format(.gif)
            case "webp": return .format(.webp)
            default: throw bad("jpeg|png|gif|webp")
            }
        case "quality":
            try count(1...1, "0 to 100")
            let value = try int(a[0], "0 to 100", allowsNegative: false)
            guard value <= 100 else { throw bad("0 to 100") }
            return .quality(max(1, value))
        case "no_upscale":
            try count(0...0, "")
            return .noUpscale
        case "upscale":
            try count(0...0, "")
            return .output(.upscale)
        case "grayscale":
            try count(0...0, "")
            return .output(.grayscale)
        case "strip_icc", "strip_exif":
            try count(0...0, "")
            return .strip
        case "max_bytes":
            try count(1...1, "bytes")
            let value = try int(a[0], "bytes", allowsNegative: false)
            return value > 0 ? .maxBytes(value) : .ignored
        case "blur":
            try count(1...2, "radius 1 to 150[, sigma]")
            let radius = try int(a[0], "radius 1 to 150[, sigma]", allowsNegative: false)
            guard radius > 0 else { throw bad("radius 1 to 150[, sigma]") }
            let sigma = a.count > 1 ? try decimal(a[1], "radius[, sigma]") : 0
            return .output(.blur(sigma: ThumborBlur.effectiveSigma(radius: radius, sigma: sigma)))
        case "proportion":
            try count(1...1, "0 < factor <= 1")
            let factor = try decimal(a[0], "0 < factor <= 1")
            return factor > 0 && factor <= 1 ? .output(.proportion(factor)) : .ignored
        case "rotate":
            try count(1...1, "degrees")
            let degrees = try int(a[0], "degrees")
            guard degrees % 90 == 0 else { throw bad("a multiple of 90 degrees") }
            let turn = ((degrees % 360) + 360) % 360
            return turn == 0 ? .ignored : .output(.rotate(degrees: turn))
        case "brightness", "contrast":
            try count(1...1, "-100 to 100")
            let value = try int(a[0], "-100 to 100")
            return .output(name == "brightness" ? .brightness(percent: value) : .contrast(percent: value))
        case "rgb":
            try count(3...3, "r, g, b")
            return .output(.rgb(red: try int(a[0], "r, g, b"), green: try int(a[1], "r, g, b"), blue: try int(a[2], "r, g, b")))
        case "fill":
            try count(1...2, "color[, fill_transparent]")
            let blends = a.count > 1 ? try bool(a[1], "color[, fill_transparent]") : false
            switch a[0] {
            case "auto": return .output(.fill(.auto, blendsTransparent: blends))
            case "blur": return .output(.fill(.blur, blendsTransparent: blends))
            default:
                guard let color = ThumborColor.parse(a[0]) else { throw bad("a colour name, hex RGB, auto, blur or transparent") }
                return .output(.fill(.color(color), blendsTransparent: blends))
            }
        case "background_color":
            try count(1...1, "color")
            guard let color = ThumborColor.parse(a[0]), a[0] != "transparent" else { throw bad("a colour name or hex RGB") }
            return .output(.backgroundColor(color))
        case "focal":
            try count(1...1, "LEFTxTOP:RIGHTxBOTTOM")
            let numbers = a[0].split(whereSeparator: { $0 == "x" || $0 == ":" })
            guard numbers.count == 4, a[0].filter({ $0 == "x" }).count == 2, a[0].filter({ $0 == ":" }).count == 1 else {
                throw bad("LEFTxTOP:RIGHTxBOTTOM")
            }
            var edges: [Int] = []
            for number in numbers { edges.append(try int(String(number), "LEFTxTOP:RIGHTxBOTTOM", allowsNegative: false)) }
            let box = SourceCrop(left: edges[0], top: edges[1], right: edges[2], bottom: edges[3])
            return box.right != box.left && box.bottom != box.top ? .focal(box) : .ignored
        case "round_corner":
            try count(4...5, "a[|b], r, g, b[, transparent]")
            let radii = a[0].split(separator: "|", omittingEmptySubsequences: false)
            guard (1...2).contains(radii.count) else { throw bad("a[|b], r, g, b[, transparent]") }
            let ra = try int(String(radii[0]), "a[|b], r, g, b", allowsNegative: false)
            let rb = radii.count > 1 ? try int(String(radii[1]), "a[|b], r, g, b", allowsNegative: false) : ra
            var channels: [UInt8] = []
            for text in a[1...3] {
                channels.append(UInt8(clamping: try int(text, "a[|b], r, g, b", allowsNegative: false)))
            }
            let transparent = a.count > 4 ? try bool(a[4], "a[|b], r, g, b[, transparent]") : false
            return .output(.roundCorner(a: ra, b: rb, color: RGBA(r: channels[0], g: channels[1], b: channels[2]),
                                        transparent: transparent))
        case "sharpen":
            try count(3...3, "amount, radius, luminance_only")
            return .output(.sharpen(amount: try decimal(a[0], "amount, radius, luminance_only"),
                                    radius: try decimal(a[1], "amount, radius, luminance_only"),
                                    luminanceOnly: try bool(a[2], "amount, radius, luminance_only")))
        case "watermark":
            try count(4...6, "url, x, y, alpha[, w_ratio, h_ratio]")
            func position(_ text: String) throws(ImageServiceError) -> String {
                if text == "center" || text == "repeat" { return text }
                let body = text.hasSuffix("p") ? String(text.dropLast()) : text
                _ = try int(body, "url, x, y, alpha[, w_ratio, h_ratio]")
                return text
            }
            func ratio(_ index: Int) throws(ImageServiceError) -> Int? {
                guard a.count > index, a[index] != "none" else { return nil }
                // thumbor takes any number; past 100 % the watermark outgrows the image (and an allocation
                // bound): clamped to 100, none at 0 or below.
                let value = try int(a[index], "url, x, y, alpha[, w_ratio, h_ratio]")
                return value <= 0 ? nil : min(value, 100)
            }
            guard !a[0].isEmpty else { throw bad("url, x, y, alpha[, w_ratio, h_ratio]") }
            let alpha = try int(a[3], "url, x, y, alpha 0 to 100", allowsNegative: false)
            guard alpha <= 100 else { throw bad("url, x, y, alpha 0 to 100") }
            let url = a[0].hasPrefix("http") ? a[0] : "http://" + a[0]
            guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty else {
                throw bad("url, x, y, alpha[, w_ratio, h_ratio] with url an image's address")
            }
            return .output(.watermark(ThumborWatermark(url: url, x: try position(a[1]), y: try position(a[2]), alpha: alpha,
                                               widthRatio: try ratio(4), heightRatio: try ratio(5))))
        default:
            throw .badOptions("unknown filter \(name.prefix(40))")
        }
    }
}

/// Thumbor's blur kernel: a Gaussian of `sigma` (the radius when 0) truncated at `radius` (at most 150) taps.
///
/// - Important: Stateless; thread-safe.
enum ThumborBlur {
    /// The standard deviation of thumbor's truncated kernel, which the service's Gaussian approximates: with the
    /// default sigma (= radius) the kernel stops at 1σ, a much narrower blur than a Gaussian of σ = radius.
    static func effectiveSigma(radius: Int, sigma: Double) -> Double {
        let r = min(radius, 150)
        let s = sigma == 0 ? Double(radius) : abs(sigma)
        guard s > 0 else { return 0 }
        var weight = 0.0, moment = 0.0
        for x in -r...r {
            let w = exp(-Double(x * x) / (2 * s * s))
            weight += w
            moment += w * Double(x * x)
        }
        return (moment / weight).squareRoot()
    }
}
