/// Which levels of an `ImageCache` an operation touches.
///
/// - Important: A value type; thread-safe.
public struct ImageCacheType: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The memory cache of decoded images.
    public static let memory = ImageCacheType(rawValue: 1 << 0)
    /// The disk cache of encoded bytes.
    public static let disk = ImageCacheType(rawValue: 1 << 1)
    /// Both.
    public static let all: ImageCacheType = [.memory, .disk]
}
