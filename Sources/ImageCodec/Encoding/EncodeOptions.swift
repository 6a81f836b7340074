/// How to encode.
///
/// - Important: A value type; thread-safe.
public struct EncodeOptions: Sendable, Hashable {
    /// Quality for lossy formats (JPEG, lossy WebP), 0…1. Default 0.9.
    public var quality: Double
    /// Encode WebP losslessly. Default `false`.
    public var isLossless: Bool
    /// Write an interlaced (Adam7) PNG / progressive JPEG. Default `false`.
    public var isProgressive: Bool

    /// Makes options; every parameter defaults to the value documented on its property.
    public init(quality: Double = 0.9, isLossless: Bool = false, isProgressive: Bool = false) {
        self.quality = quality
        self.isLossless = isLossless
        self.isProgressive = isProgressive
    }
}
