/// Every error `ImageCodec` throws. Each case keeps the underlying cause.
///
/// - Important: A value type; thread-safe.
public enum ImageCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data is empty.
    case emptyData
    /// The bytes are not in any format recognised here.
    case unknownFormat
    /// The format is recognised (BMP, TIFF, HEIF, AVIF, …) but WebImage has no decoder for it.
    case unsupportedFormat(ImageFormat)
    /// A width or height that is zero, negative or too large to address.
    case invalidDimensions(width: Int, height: Int)
    /// The image exceeds a `DecodeLimits` limit; checked from the header, before any pixel allocation.
    case limitExceeded(limit: DecodeLimits.Limit, actual: Int, maximum: Int)
    /// The data ends before the image does and no usable image could be produced.
    case truncated(format: ImageFormat)
    /// The decoding library rejected the data; `message` is the library's own text
    /// (e.g. libjpeg's "Bogus DHT index 99").
    case corruptData(format: ImageFormat, message: String)
    /// A frame index outside `0..<frameCount`.
    case frameIndexOutOfRange(index: Int, frameCount: Int)
    /// The encoder failed; `message` is the library's own text.
    case encodingFailed(format: ImageFormat, message: String)
    /// This format cannot be encoded here, or cannot hold what was given (e.g. animation in JPEG).
    case unsupportedEncoding(ImageFormat)
    /// A pixel buffer of this many bytes could not be allocated.
    case allocationFailed(byteCount: Int)
    /// The encode passed `EncodeOptions.deadline` and was stopped (nothing was written).
    case deadlineExceeded(format: ImageFormat)

    public var description: String {
        switch self {
        case .emptyData: return "empty image data"
        case .unknownFormat: return "unrecognised image format"
        case .unsupportedFormat(let f): return "\(f) images are recognised but not supported"
        case .invalidDimensions(let w, let h): return "invalid image dimensions \(w)×\(h)"
        case .limitExceeded(let limit, let actual, let maximum):
            return "image exceeds the decode limit \(limit.rawValue): \(actual) > \(maximum)"
        case .truncated(let f): return "truncated \(f) data"
        case .corruptData(let f, let message): return "corrupt \(f) data: \(message)"
        case .frameIndexOutOfRange(let i, let n): return "frame index \(i) out of range 0..<\(n)"
        case .encodingFailed(let f, let message): return "\(f) encoding failed: \(message)"
        case .unsupportedEncoding(let f): return "cannot encode \(f)"
        case .allocationFailed(let n): return "could not allocate \(n) bytes of pixels"
        case .deadlineExceeded(let f): return "\(f) encoding stopped at its deadline"
        }
    }
}
