/// An image container format, as recognised from a file's first bytes.
///
/// `ImageFormat.sniff(_:)` looks at no more than the first 64 bytes for most formats (the `ftyp` box, up to 128
/// bytes, for ISO BMFF); APNG detection walks the
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
    /// HEIF/HEIC (ISO BMFF `ftyp` with a HEVC HEIF brand, or `mif1`/`msf1` alone). Decoded by the optional
    /// `WebImageHEIF` module.
    case heif
    /// AVIF (ISO BMFF `ftyp` with an `avif` or `avis` brand, major or compatible). Decoded by the optional
    /// `WebImageAVIF` module.
    case avif
    /// Windows icon. Recognised, not decoded.
    case ico
    /// JPEG XL (codestream `FF 0A` or the ISO BMFF container's `JXL ` box). Decoded by the optional
    /// `WebImageJXL` module.
    case jpegXL = "jxl"
    /// Nothing recognised.
    case unknown

    /// Whether a decoder registered in `ImageCodecRegistry.shared` handles this format: JPEG, PNG, APNG, GIF
    /// and WebP built in; AVIF, HEIF and JPEG XL once their optional module registered (`AVIFCodec.register()`, …).
    ///
    /// - Important: Not O(1): reads the registry (takes its lock).
    public var isDecodable: Bool {
        self != .unknown && ImageCodecRegistry.shared.canDecode(self)
    }

    /// Whether this format is recognised but no registered codec decodes it (BMP, TIFF, ICO; HEIF, AVIF and
    /// JPEG XL without their modules).
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

    /// A readable description, for logs and test failures.
    public var description: String { rawValue }
}
