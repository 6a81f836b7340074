/// Which decoded image a request asks for from the same bytes, beyond size and transform: all frames or the
/// first only (`.ignoreAnimatedImage`, or the cache's `allowAnimatedImage == false`), decoded for display
/// (premultiplied) or straight alpha (`.ignoreImageDecoding`, or the cache's `decodeForDisplay == false`).
///
/// Part of the memory key (`ImageCacheKey`): a reduced variant is stored under its own key, so a plain request
/// never gets one frame of an animation or a bitmap not decoded for display.
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

    /// A variant from its two flags.
    init(isFirstFrameOnly: Bool, isStraightAlpha: Bool) {
        self.isFirstFrameOnly = isFirstFrameOnly
        self.isStraightAlpha = isStraightAlpha
    }

    /// Every variant, the full one first: the full-size images `ImageCache` finds or removes for a key without
    /// its index of variants.
    static let all = [false, true].flatMap { first in
        [false, true].map { straight in DecodeVariant(isFirstFrameOnly: first, isStraightAlpha: straight) }
    }
}
