/// What a registered codec can do (SDWebImage's coder capabilities, Nuke's decoder context checks).
///
/// ```swift
/// let capabilities: ImageCodecCapabilities = [.still, .animation]
/// ```
///
/// - Important: A value type; thread-safe.
public struct ImageCodecCapabilities: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int
    /// Makes capabilities from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Decodes (or encodes) still images.
    public static let still = ImageCodecCapabilities(rawValue: 1 << 0)
    /// Decodes (or encodes) animations: more than one frame with durations.
    public static let animation = ImageCodecCapabilities(rawValue: 1 << 1)
    /// Makes partial images from incomplete data (`ImageDecoding.makeIncrementalDecoder(options:)`).
    public static let incremental = ImageCodecCapabilities(rawValue: 1 << 2)
}

/// What the registry knows when it picks a decoder: the sniffed format and whether the data is complete.
///
/// - Important: A value type; thread-safe.
public struct ImageDecodingContext: Sendable, Hashable {
    /// The format `ImageFormat.sniff(_:)` recognised (`.unknown` for a format of the codec's own).
    public var format: ImageFormat
    /// Whether the data is complete (`false` for the partial data of an `IncrementalDecoder`).
    public var isComplete: Bool

    /// Makes a context.
    public init(format: ImageFormat, isComplete: Bool) {
        self.format = format
        self.isComplete = isComplete
    }
}
