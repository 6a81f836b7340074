/// Which decoded image a request asks for from the same bytes, beyond size and transform: all frames or the
/// first only (`.ignoreAnimatedImage`, or the cache's `allowAnimatedImage == false`), decoded for display
/// (premultiplied) or straight alpha (`.ignoreImageDecoding`, or the cache's `decodeForDisplay == false`).
///
/// Part of the memory key: a reduced variant is stored under its own key, so a plain request never gets one
/// frame of an animation or a bitmap not decoded for display. The full variant keeps the plain key.
///
/// A value type; thread-safe.
struct DecodeVariant: Hashable, Sendable {
    var isFirstFrameOnly = false
    var isStraightAlpha = false

    /// The variant `options` ask for with `cache`'s settings now.
    init(options: ImageOptions, cache: ImageCache?) {
        isFirstFrameOnly = options.contains(.ignoreAnimatedImage) || !(cache?.allowAnimatedImage ?? true)
        isStraightAlpha = options.contains(.ignoreImageDecoding) || !(cache?.decodeForDisplay ?? true)
    }

    /// Every variant's suffix, the full variant's (empty) first: what `ImageCache` looks at to find or remove
    /// every decoded image of one key.
    static let allKeySuffixes = ["", "#frames=first", "#alpha=straight", "#frames=first#alpha=straight"]

    /// The memory key's suffix: empty for the full variant.
    var keySuffix: String {
        (isFirstFrameOnly ? "#frames=first" : "") + (isStraightAlpha ? "#alpha=straight" : "")
    }
}
