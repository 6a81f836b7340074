/// Errors from the pixel processing operations (resize, crop, blur, `RowResampler`).
///
/// Each case keeps the argument that was rejected. Allocating the result may also throw
/// `ImageCodecError.allocationFailed`; nothing in processing traps on a bad argument.
///
/// - Important: A value type; thread-safe.
public enum ImageProcessingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A requested size that is zero, negative, or over `PixelBuffer.maxProcessedPixelCount` pixels.
    case invalidSize(width: Int, height: Int)
    /// A `maxPixelSize` that is zero or negative.
    case invalidMaxPixelSize(Int)
    /// A crop rectangle that is empty or lies entirely outside the image.
    case emptyCropRect(x: Int, y: Int, width: Int, height: Int, imageWidth: Int, imageHeight: Int)
    /// A blur radius that is negative, NaN or infinite.
    case invalidRadius(Double)
    /// A row given to `RowResampler` with fewer bytes than `sourceWidth * 4`.
    case rowTooShort(byteCount: Int, expected: Int)
    /// More rows given to `RowResampler` than `sourceHeight`.
    case tooManyRows(sourceHeight: Int)
    /// `RowResampler.finish()` called before every source row was given.
    case incompleteSource(rowsConsumed: Int, sourceHeight: Int)

    /// A one-line English description with the rejected values.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): return "invalid target size \(w)×\(h)"
        case .invalidMaxPixelSize(let n): return "invalid maximum pixel size \(n)"
        case .emptyCropRect(let x, let y, let w, let h, let iw, let ih):
            return "crop rectangle (\(x), \(y), \(w)×\(h)) does not overlap the \(iw)×\(ih) image"
        case .invalidRadius(let r): return "invalid blur radius \(r)"
        case .rowTooShort(let n, let expected): return "source row of \(n) bytes, expected \(expected)"
        case .tooManyRows(let h): return "more than \(h) source rows given"
        case .incompleteSource(let n, let h): return "only \(n) of \(h) source rows given"
        }
    }
}
