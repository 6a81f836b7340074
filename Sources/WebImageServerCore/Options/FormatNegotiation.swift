import Foundation
import ImageCodec

/// Chooses the output format of a request (`format=auto` from the `Accept` header and the registered encoders).
///
/// `format=auto` takes the first of its candidates, AVIF, then WebP, then JPEG XL (JPEG XL first with `prefer=jxl`
/// or `ImageServiceConfiguration.prefersJXL`), that the client lists in `Accept` and the process can encode
/// (`ImageCodecRegistry.shared`) at the output's size; an animation kept with `anim=1` takes the first of them
/// that animates, else GIF; else PNG for a source with alpha, else JPEG.
///
/// - Important: Stateless; thread-safe.
public enum FormatNegotiation {
    /// Whether `accept` lists `image/webp` with a quality above 0. Wildcards (`image/*`, `*/*`) do not count:
    /// clients that decode WebP say so (browsers do), and a client that does not must not receive it.
    public static func acceptsWebP(_ accept: String?) -> Bool { acceptedFormats(accept).contains(.webp) }

    /// The formats `format=auto` may choose that `accept` lists by name with a quality above 0: `image/avif`,
    /// `image/webp`, `image/jxl` (media types are case-insensitive). Wildcards (`image/*`, `*/*`) name none of
    /// them: a client that decodes one says so, and one that does not must not receive it.
    public static func acceptedFormats(_ accept: String?) -> Set<ImageFormat> {
        guard let accept else { return [] }
        var formats = Set<ImageFormat>()
        for range in split(Substring(accept), at: ",") {
            let parts = split(range, at: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let format: ImageFormat
            switch parts.first {
            case "image/avif": format = .avif
            case "image/webp": format = .webp
            case "image/jxl": format = .jpegXL
            default: continue
            }
            // The weight (RFC 9110 §12.4.2): 1 when absent; a `q` that is not a number from 0 to 1 makes the
            // element invalid, not a preference of 1, so it names nothing (a client that wrote `q = 0` or `q=` does
            // not get the format).
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let nameAndValue = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard nameAndValue[0].trimmingCharacters(in: .whitespaces) == "q" else { continue }
                weight = nameAndValue.count == 2 ? qualityValue(nameAndValue[1].trimmingCharacters(in: .whitespaces)) ?? 0 : 0
            }
            if weight > 0 { formats.insert(format) }
        }
        return formats
    }

    /// A `qvalue` read leniently (more than three decimals allowed): digits with at most one point, from 0 to 1;
    /// `nil` for anything else (a sign, an exponent, `nan`, an empty value).
    static func qualityValue(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E }),
              let value = Double(text), (0...1).contains(value) else { return nil }
        return value
    }

    /// `text` cut at each `separator` outside a quoted string (RFC 9110 §5.6.4: `"…"`, with `\` escaping the next
    /// character), so that a parameter value such as `note="a, image/avif"` names no media range.
    static func split(_ text: Substring, at separator: Character) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex, index = text.startIndex
        var quoted = false, escaped = false
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
            } else if character == "\"" {
                quoted = true
            } else if character == separator {
                pieces.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        pieces.append(text[start...])
        return pieces.filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// The formats `format=auto` tries before JPEG, PNG and GIF, in order: those of `accepted` that `canEncode`
    /// (default: a registered encoder of `ImageCodecRegistry.shared`), AVIF, WebP, JPEG XL, or JPEG XL first when
    /// `prefersJXL`. Part of the result key (it decides the format with the source's alpha, frames and size).
    public static func candidates(accepted: Set<ImageFormat>, prefersJXL: Bool,
                                  canEncode: (ImageFormat) -> Bool = { ImageCodecRegistry.shared.canEncode($0) }) -> [ImageFormat] {
        let order: [ImageFormat] = prefersJXL ? [.jpegXL, .avif, .webp] : [.avif, .webp, .jpegXL]
        return order.filter { accepted.contains($0) && canEncode($0) }
    }

    /// The format to encode: the requested one, or for `.auto` the first of `candidates` that `fits` (default:
    /// every one) and, for an animation kept (`keepsAnimation`, more than one frame), that `animates` (default: a
    /// registered encoder writes it animated); else GIF for an animation kept, PNG for a source with alpha, JPEG.
    /// For `.original`: `sourceFormat` when it is JPEG, PNG, GIF or WebP, else PNG for a source with alpha, else JPEG.
    ///
    /// An animation kept whose `loopCount` is not 0 (it stops) is not written as AVIF by `.auto`: libavif 0.11
    /// writes no edit list, so every AVIF sequence loops forever; WebP, JPEG XL and GIF keep the count. Default 0.
    public static func outputFormat(requested: RequestedFormat, candidates: [ImageFormat], sourceHasAlpha: Bool,
                                    keepsAnimation: Bool, loopCount: Int = 0, sourceFormat: ImageFormat? = nil,
                                    fits: (ImageFormat) -> Bool = { _ in true },
                                    animates: (ImageFormat) -> Bool = { ImageCodecRegistry.shared.canEncode($0, frameCount: 2) })
        -> ImageFormat {
        switch requested {
        case .original:
            if let sourceFormat, [.jpeg, .png, .gif, .webp].contains(sourceFormat) { return sourceFormat }
            return sourceHasAlpha ? .png : .jpeg
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .gif: return .gif
        case .avif: return .avif
        case .jxl: return .jpegXL
        case .auto:
            let keepsLoopCount = { (format: ImageFormat) in loopCount == 0 || format != .avif }
            if let modern = candidates.first(where: { fits($0) && (!keepsAnimation || (animates($0) && keepsLoopCount($0))) }) {
                return modern
            }
            if keepsAnimation { return .gif }
            return sourceHasAlpha ? .png : .jpeg
        }
    }
}
