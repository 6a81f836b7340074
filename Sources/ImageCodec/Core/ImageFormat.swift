/// An image container format, as recognised from a file's first bytes.
///
/// `ImageFormat.sniff(_:)` looks at no more than the first 64 bytes for most formats; APNG detection walks the
/// PNG chunk headers up to the first `IDAT` (it never reads chunk payloads).
///
/// - Important: A value type; thread-safe.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// JPEG (JFIF, EXIF, Adobe), baseline or progressive.
    case jpeg
    /// PNG without animation.
    case png
    /// Animated PNG: a PNG with an `acTL` chunk before its first `IDAT`.
    case apng
    /// GIF 87a or 89a, still or animated.
    case gif
    /// WebP: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`, possibly animated).
    case webp
    /// Windows bitmap. Recognised, not decoded.
    case bmp
    /// TIFF (either byte order). Recognised, not decoded.
    case tiff
    /// HEIF/HEIC (ISO BMFF `ftyp` with a HEIF brand). Recognised, not decoded.
    case heif
    /// AVIF (ISO BMFF `ftyp` with an AVIF brand). Recognised, not decoded.
    case avif
    /// Windows icon. Recognised, not decoded.
    case ico
    /// JPEG XL (codestream or ISO BMFF container). Recognised, not decoded.
    case jpegXL = "jxl"
    /// Nothing recognised.
    case unknown

    /// Whether WebImage can decode this format.
    public var isDecodable: Bool {
        switch self {
        case .jpeg, .png, .apng, .gif, .webp: return true
        case .bmp, .tiff, .heif, .avif, .ico, .jpegXL, .unknown: return false
        }
    }

    /// Whether this format is recognised but has no decoder here (BMP, TIFF, HEIF, AVIF, ICO, JPEG XL).
    public var isRecognizedButUnsupported: Bool { self != .unknown && !isDecodable }

    /// The MIME type, e.g. `image/webp`; `application/octet-stream` for `.unknown`.
    public var mimeType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .apng: return "image/apng"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .bmp: return "image/bmp"
        case .tiff: return "image/tiff"
        case .heif: return "image/heif"
        case .avif: return "image/avif"
        case .ico: return "image/vnd.microsoft.icon"
        case .jpegXL: return "image/jxl"
        case .unknown: return "application/octet-stream"
        }
    }

    /// The usual file extension without a dot (`jpg`, `png`, `webp`, …); `bin` for `.unknown`.
    public var fileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .apng: return "png"
        case .unknown: return "bin"
        default: return rawValue
        }
    }

    public var description: String { rawValue }
}
