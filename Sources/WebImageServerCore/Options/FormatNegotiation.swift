import Foundation
import ImageCodec

/// Chooses the output format of a request (`format=auto` from the `Accept` header).
///
/// - Important: Stateless; thread-safe.
public enum FormatNegotiation {
    /// Whether `accept` lists `image/webp` with a quality above 0. Wildcards (`image/*`, `*/*`) do not count:
    /// clients that decode WebP say so (browsers do), and a client that does not must not receive it.
    public static func acceptsWebP(_ accept: String?) -> Bool {
        guard let accept else { return false }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "image/webp" else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if q > 0 { return true }
        }
        return false
    }

    /// The format to encode: the requested one, or for `.auto` WebP when accepted, else GIF for an animation
    /// kept (`keepsAnimation` and more than one frame), PNG for a source with alpha, else JPEG; for `.original`
    /// `sourceFormat` when it is JPEG, PNG, GIF or WebP, else PNG for a source with alpha, else JPEG.
    public static func outputFormat(requested: RequestedFormat, acceptsWebP: Bool, sourceHasAlpha: Bool,
                                    keepsAnimation: Bool, sourceFormat: ImageFormat? = nil) -> ImageFormat {
        switch requested {
        case .original:
            if let sourceFormat, [.jpeg, .png, .gif, .webp].contains(sourceFormat) { return sourceFormat }
            return sourceHasAlpha ? .png : .jpeg
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        case .gif: return .gif
        case .auto:
            if acceptsWebP { return .webp }
            if keepsAnimation { return .gif }
            return sourceHasAlpha ? .png : .jpeg
        }
    }
}
