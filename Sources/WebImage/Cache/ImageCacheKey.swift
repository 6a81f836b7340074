#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The key of one decoded image in `ImageCache.memoryCache`: the cache key of the original bytes (the disk
/// cache's key, usually the URL string) plus everything that makes a different decoded image from those bytes.
///
/// ```swift
/// let full = ImageCacheKey("https://example.com/a.png")
/// let thumbnail = ImageCacheKey("https://example.com/a.png", thumbnailPixelSize: 40)
/// cache.memoryCache.object(forKey: thumbnail)
/// ```
///
/// A struct, not a string with suffixes: a URL's own fragment (`a.png#frames=first`, `big.png#thumbnail=40`)
/// can never be taken for a variant of another URL. `key` and `transformID` compare by their UTF-8 bytes, as
/// the disk cache compares keys (Swift's `String ==` would merge `"\u{E9}"` and `"e\u{301}"`).
///
/// - Important: A value type; thread-safe.
public struct ImageCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The cache key of the original bytes (what the disk cache stores them under).
    public let key: String
    /// The longest side of a downsampled decode (`requestImage(thumbnailPixelSize:)`); `nil` for full size.
    public let thumbnailPixelSize: Int?
    /// The `ImageTransform.id` applied after decoding; `nil` for none.
    public let transformID: String?
    /// Whether only the first frame of an animation was decoded (`.ignoreAnimatedImage`, or the cache's
    /// `allowAnimatedImage == false`).
    public let isFirstFrameOnly: Bool
    /// Whether the pixels keep straight alpha, not decoded for display (`.ignoreImageDecoding`, or the cache's
    /// `decodeForDisplay == false`).
    public let isStraightAlpha: Bool
    /// The colour management of the decode (`ColorManagement`): nil for sRGB (the default), `preserve`, or
    /// `target-<hash of the profile>-<its size>`.
    public let colorID: String?

    /// Makes a key. By default the full-size image, all frames, decoded for display, untransformed: what
    /// `ImageCache.setImage(_:forKey:)` and a plain request store.
    public init(_ key: String, thumbnailPixelSize: Int? = nil, transformID: String? = nil,
                isFirstFrameOnly: Bool = false, isStraightAlpha: Bool = false, colorID: String? = nil) {
        self.key = key
        self.thumbnailPixelSize = thumbnailPixelSize
        self.transformID = transformID
        self.isFirstFrameOnly = isFirstFrameOnly
        self.isStraightAlpha = isStraightAlpha
        self.colorID = colorID
    }

    /// The key of `key`'s image in `variant`, with a thumbnail size and transform.
    init(_ key: String, thumbnailPixelSize: Int? = nil, transformID: String? = nil, variant: DecodeVariant) {
        self.init(key, thumbnailPixelSize: thumbnailPixelSize, transformID: transformID,
                  isFirstFrameOnly: variant.isFirstFrameOnly, isStraightAlpha: variant.isStraightAlpha,
                  colorID: variant.colorID)
    }

    /// The plain key of the same bytes (full size, all frames, decoded for display, untransformed): what the
    /// cache's index of variants files every variant of `key` under.
    var base: ImageCacheKey { ImageCacheKey(key) }

    /// Bytes this key holds in memory, counted in the memory cache's cost: the key and the transform id.
    var byteCount: Int {
        key.utf8.count + (transformID?.utf8.count ?? 0) + (colorID?.utf8.count ?? 0) + MemoryLayout<ImageCacheKey>.size
    }

    public static func == (lhs: ImageCacheKey, rhs: ImageCacheKey) -> Bool {
        lhs.thumbnailPixelSize == rhs.thumbnailPixelSize && lhs.isFirstFrameOnly == rhs.isFirstFrameOnly
            && lhs.isStraightAlpha == rhs.isStraightAlpha && Self.sameBytes(lhs.key, rhs.key)
            && Self.sameBytes(lhs.transformID, rhs.transformID) && lhs.colorID == rhs.colorID
    }

    /// Hashes `String`'s own hash (of the normalised form): equal bytes give equal hashes; canonically equal
    /// keys merely share a bucket.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(thumbnailPixelSize)
        hasher.combine(transformID)
        hasher.combine(isFirstFrameOnly)
        hasher.combine(isStraightAlpha)
        hasher.combine(colorID)
    }

    /// The key and its variant, for logs: `https://e.com/a.png [thumbnail 40, first frame]`.
    public var description: String {
        var parts: [String] = []
        if let size = thumbnailPixelSize { parts.append("thumbnail \(size)") }
        if let id = transformID { parts.append("transform \(id)") }
        if isFirstFrameOnly { parts.append("first frame") }
        if isStraightAlpha { parts.append("straight alpha") }
        if let colorID { parts.append("colour \(colorID)") }
        return parts.isEmpty ? key : "\(key) [\(parts.joined(separator: ", "))]"
    }

    private static func sameBytes(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case let (l?, r?):
            // memcmp on contiguous UTF-8 (native strings): `elementsEqual` compares a byte at a time.
            let fast = l.utf8.withContiguousStorageIfAvailable { left in
                r.utf8.withContiguousStorageIfAvailable { right in
                    left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
                }
            }
            if case let result?? = fast { return result }
            return l.utf8.elementsEqual(r.utf8)
        default: return false
        }
    }
}
