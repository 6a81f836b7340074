/// Errors from making or reading a placeholder hash (`BlurHash`, `ThumbHash`).
///
/// - Important: A value type; thread-safe.
public enum PlaceholderHashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// BlurHash components outside 1…9 on an axis.
    case invalidComponents(x: Int, y: Int)
    /// An image the hash cannot take (ThumbHash: over 100 pixels a side).
    case invalidImageSize(width: Int, height: Int)
    /// A hash that is malformed: wrong length, a character outside base 83, a truncated ThumbHash.
    case malformedHash(String)
    /// A decode size that is zero, negative or over `PixelBuffer.maxProcessedPixelCount`.
    case invalidDecodeSize(width: Int, height: Int)

    /// A one-line English description.
    public var description: String {
        switch self {
        case .invalidComponents(let x, let y): return "BlurHash components \(x)×\(y) are outside 1…9"
        case .invalidImageSize(let w, let h): return "a \(w)×\(h) image does not fit the hash's 100×100"
        case .malformedHash(let reason): return "malformed placeholder hash: \(reason)"
        case .invalidDecodeSize(let w, let h): return "invalid placeholder size \(w)×\(h)"
        }
    }
}
