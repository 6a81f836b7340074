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
    /// The cache's `colorManagement` (default `.sRGB`, which keeps the plain key).
    var colorManagement = ColorManagement.sRGB

    /// The variant `options` ask for with `cache`'s settings now.
    init(options: ImageOptions, cache: ImageCache?) {
        isFirstFrameOnly = options.contains(.ignoreAnimatedImage) || !(cache?.allowAnimatedImage ?? true)
        isStraightAlpha = options.contains(.ignoreImageDecoding) || !(cache?.decodeForDisplay ?? true)
        colorManagement = cache?.colorManagement ?? .sRGB
    }

    /// A variant from its flags and colour management.
    init(isFirstFrameOnly: Bool, isStraightAlpha: Bool, colorManagement: ColorManagement = .sRGB) {
        self.isFirstFrameOnly = isFirstFrameOnly
        self.isStraightAlpha = isStraightAlpha
        self.colorManagement = colorManagement
    }

    /// Every variant, the full one first: the full-size images `ImageCache` finds or removes for a key without
    /// its index of variants. A `.target` colour variant is not in it (it names a profile); the index finds it.
    static let all = [ColorManagement.sRGB, .preserve].flatMap { colour in
        [false, true].flatMap { first in
            [false, true].map { straight in
                DecodeVariant(isFirstFrameOnly: first, isStraightAlpha: straight, colorManagement: colour)
            }
        }
    }

    /// The colour part of the memory key: nil for sRGB (the plain key), `preserve`, or
    /// `target-<FNV-1a of the profile>-<its size>`.
    var colorID: String? {
        switch colorManagement {
        case .sRGB: return nil
        case .preserve: return "preserve"
        case .target(let profile):
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in profile { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return "target-\(String(hash, radix: 16))-\(profile.count)"
        }
    }
}
