/// How to encode.
///
/// ```swift
/// let fixed = EncodeOptions(quality: 0.8)
/// let automatic = EncodeOptions(automaticQuality: .medium)   // the lowest quality that still scores 70
/// ```
///
/// Automatic quality is a separate property rather than a case of an enum in place of `quality`: every encoder
/// (the built-in ones and those other modules register) reads `quality` as a number, and the search hands each
/// of them a plain fixed quality per attempt, so they need not know automatic quality exists; `quality` also
/// stays what animations and lossless formats use.
///
/// - Important: A value type; thread-safe.
public struct EncodeOptions: Sendable, Hashable {
    /// Quality for lossy formats (JPEG, lossy WebP, AVIF, JPEG XL), 0…1. Default 0.9. With `automaticQuality`,
    /// used only where no search runs (animations).
    public var quality: Double
    /// Encode WebP, AVIF or JPEG XL losslessly. Default `false`.
    public var isLossless: Bool
    /// Write an interlaced (Adam7) PNG / progressive JPEG. Default `false`.
    public var isProgressive: Bool
    /// When the encode must give up: an encoder checks it where its library lets it stop (libwebp's progress hook,
    /// between the frames of an animation, between libjxl's output chunks) and throws
    /// `ImageCodecError.deadlineExceeded` once it has passed. A library call that cannot be interrupted (one
    /// AV1 frame in libavif 0.11, which has no abort hook) runs to its end first. Default `nil`: no deadline.
    public var deadline: ContinuousClock.Instant?
    /// When set, still lossy output is encoded at the lowest quality whose SSIMULACRA2 score against the
    /// pixels given stays at or above the target (`AutomaticQuality`), and for JPEG the chroma subsampling is
    /// chosen per image. Default `nil` (fixed `quality`).
    public var automaticQuality: QualityTarget?
    /// JPEG chroma subsampling. Default `.yuv420` (libjpeg's); automatic quality chooses per image.
    public var chromaSubsampling: ChromaSubsampling

    /// Makes options; every parameter defaults to the value documented on its property.
    public init(quality: Double = 0.9, isLossless: Bool = false, isProgressive: Bool = false,
                deadline: ContinuousClock.Instant? = nil, automaticQuality: QualityTarget? = nil,
                chromaSubsampling: ChromaSubsampling = .yuv420) {
        self.quality = quality
        self.isLossless = isLossless
        self.isProgressive = isProgressive
        self.deadline = deadline
        self.automaticQuality = automaticQuality
        self.chromaSubsampling = chromaSubsampling
    }

    /// Whether `deadline` has passed (`false` without one).
    public var isPastDeadline: Bool {
        guard let deadline else { return false }
        return ContinuousClock.now >= deadline
    }

    /// Throws `ImageCodecError.deadlineExceeded(format:)` when `deadline` has passed.
    public func checkDeadline(_ format: ImageFormat) throws(ImageCodecError) {
        if isPastDeadline { throw .deadlineExceeded(format: format) }
    }
}

/// How many chroma samples a JPEG keeps.
///
/// - Important: A value type; thread-safe.
public enum ChromaSubsampling: String, Sendable, Hashable {
    /// Half the chroma resolution in both directions: smaller, softer colour edges (libjpeg's default).
    case yuv420
    /// Full chroma resolution: sharp colour edges (text, graphics, saturated detail).
    case yuv444
}
