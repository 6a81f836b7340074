/// Cut away the border of the (oriented) source that has the colour of one of its corners, before anything else:
/// thumbor's `trim`, `trim:top-left`, `trim:bottom-right`, with a tolerance (`trim:top-left:10`).
///
/// A pixel belongs to the border when its Euclidean distance to the corner pixel, over straight (unpremultiplied)
/// R, G, B and A in 0…255, is at most `tolerance` (thumbor's C `_bounding_box`, whose distance counts alpha for an
/// image with alpha, and 0 for alpha where there is none). When nothing would be left (a uniform image, or a
/// tolerance above the image's largest distance), the trim is ignored, as thumbor ignores it. The box is found on
/// the decoded pixels (`SourceTrim.boundingBox(of:)`), so a trim costs one full-size decode of the first frame,
/// within the decode limits and the decode budget. The manual crop (`sourceCrop`) stays in the source's pixels and
/// keeps what of it the trim left (thumbor shifts it by the trim's origin and clamps it to the trimmed image: an
/// empty one is ignored).
///
/// - Important: A value type; thread-safe.
public struct SourceTrim: Sendable, Hashable {
    /// The corner whose colour is the border's.
    public enum Reference: String, Sendable, Hashable {
        /// The top-left pixel (thumbor's default).
        case topLeft = "top-left"
        /// The bottom-right pixel.
        case bottomRight = "bottom-right"
    }

    /// The corner whose colour is the border's. Default `.topLeft`.
    public var reference: Reference
    /// The largest distance (0…510; 442 spans every opaque colour) a border pixel may have from the corner's colour.
    /// Default 0: only the exact colour.
    public var tolerance: Int

    /// Makes a trim (a negative tolerance counts as 0).
    public init(reference: Reference = .topLeft, tolerance: Int = 0) {
        self.reference = reference
        self.tolerance = max(0, tolerance)
    }

    /// thumbor's reading of the part it matched (`trim`, `trim:top-left`, `trim:bottom-right:15`, `trim:15`):
    /// split at `:`, the second piece names the corner (anything but `top-left` is the bottom-right one, so that
    /// `trim:15` is thumbor's bottom-right trim with tolerance 0), the third is the tolerance (a value too large
    /// for an `Int` saturates: nothing is ever that far, so the trim is ignored). `nil` for text that does not
    /// start with `trim`.
    public init?(thumbor text: String) {
        let pieces = text.split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.first == "trim" else { return nil }
        reference = pieces.count > 1 && pieces[1] != "top-left" ? .bottomRight : .topLeft
        if pieces.count > 2 {
            let digits = pieces[2].drop { $0 == "0" }
            guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
            tolerance = digits.isEmpty ? 0 : digits.count > 18 ? Int.max : Int(digits) ?? Int.max
        } else {
            tolerance = 0
        }
    }

    /// The spelling in `canonicalProcessing` (part of the result-cache key).
    public var canonicalName: String { "\(reference.rawValue):\(tolerance)" }
}
