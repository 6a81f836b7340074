/// How to encode.
///
/// - Important: A value type; thread-safe.
public struct EncodeOptions: Sendable, Hashable {
    /// Quality for lossy formats (JPEG, lossy WebP, AVIF, JPEG XL), 0…1. Default 0.9.
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

    /// Makes options; every parameter defaults to the value documented on its property.
    public init(quality: Double = 0.9, isLossless: Bool = false, isProgressive: Bool = false,
                deadline: ContinuousClock.Instant? = nil) {
        self.quality = quality
        self.isLossless = isLossless
        self.isProgressive = isProgressive
        self.deadline = deadline
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
