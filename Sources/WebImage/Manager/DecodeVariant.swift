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
    /// The cache's `colorManagement` (default `.sRGB`, which keeps the plain key).
    var colorManagement = ColorManagement.sRGB

    /// The variant `options` ask for with `cache`'s settings now.
    init(options: ImageOptions, cache: ImageCache?) {
        isFirstFrameOnly = options.contains(.ignoreAnimatedImage) || !(cache?.allowAnimatedImage ?? true)
        isStraightAlpha = options.contains(.ignoreImageDecoding) || !(cache?.decodeForDisplay ?? true)
        colorManagement = cache?.colorManagement ?? .sRGB
    }

    /// Every variant's suffix, the full variant's (empty) first: what `ImageCache` looks at to find or remove
    /// every decoded image of one key. A `.target` colour variant is not in it (its suffix names the profile).
    static let allKeySuffixes = ["", "#colour=preserve"].flatMap { colour in
        ["", "#frames=first", "#alpha=straight", "#frames=first#alpha=straight"].map { $0 + colour }
    }

    /// The memory key's suffix: empty for the full variant.
    var keySuffix: String {
        (isFirstFrameOnly ? "#frames=first" : "") + (isStraightAlpha ? "#alpha=straight" : "") + colourSuffix
    }

    /// `#colour=preserve`, `#colour=target-<FNV-1a of the profile>-<its size>`, or empty for sRGB.
    private var colourSuffix: String {
        switch colorManagement {
        case .sRGB: return ""
        case .preserve: return "#colour=preserve"
        case .target(let profile):
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in profile { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return "#colour=target-\(String(hash, radix: 16))-\(profile.count)"
        }
    }
}
