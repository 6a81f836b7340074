import ImageCodec

extension ImageManager {
    /// The `Accept` header of the built-in formats (YYWebImage's, with APNG).
    static let builtInAccept = "image/webp,image/apng,image/*;q=0.8"

    /// The headers a manager sends until `headers` is set: `Accept` lists the MIME types of the formats
    /// registered codecs decode beyond the built-in ones (e.g. `image/avif` once `AVIFCodec.register()` ran),
    /// highest priority first, then `image/webp,image/apng,image/*;q=0.8`.
    ///
    /// - Important: Thread-safe; reads `ImageCodecRegistry.shared` (not O(1): takes its lock).
    public static var defaultHeaders: [String: String] {
        let extra = ImageCodecRegistry.shared.additionalMIMETypes
        return ["Accept": (extra + [builtInAccept]).joined(separator: ",")]
    }
}
