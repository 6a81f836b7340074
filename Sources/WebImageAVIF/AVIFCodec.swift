internal import CWebImageAVIF
import ImageCodec

/// AVIF for WebImage, over Debian's libavif 0.11 (decoding with dav1d): registers an AVIF decoder (stills
/// and sequences) and, when the installed libavif has an AV1 encoder, an AVIF encoder.
///
/// ```swift
/// import WebImageAVIF
/// AVIFCodec.register()                       // once, at start-up
/// let image = try ImageDecoder.decode(avifData)
/// ```
///
/// What libavif 0.11 gives and what this module adds:
/// - Stills and sequences (`.avifs`): frame durations from the sample table. libavif 0.11 cannot read an
///   AVIF sequence's loop count (the edit list), so sequences report `loopCount` 0 (forever) and
///   `storedLoopCount` `nil`.
/// - Alpha; 10- and 12-bit images are reduced to 8 bits per channel by libavif's YUV→RGB conversion.
/// - The `clap` (crop), `irot` (rotation) and `imir` (mirror) transforms, in that order: libavif 0.11 only
///   reports them, this module applies them, so `width`/`height` are the displayed size.
/// - `DecodeLimits` become libavif's `imageSizeLimit`, `imageDimensionLimit` and `imageCountLimit` before
///   parsing (a 305-byte file declaring 16384×16384 otherwise makes libavif 0.11 upscale a 1×1 frame to
///   256 Mpx); then the declared size and frame count are checked against the limits before any pixels.
///   libavif 0.11 accepts no size limit above 16384² pixels, so that stays its ceiling even with
///   `DecodeLimits.none`.
///   `maxPixelSize` resizes after a full-size decode (AV1 has no scaled decode), so the limits apply to the
///   full size. A grid may have at most `AVIFDecoder.maximumGridTiles` tiles (libavif keeps a decoder per
///   tile).
/// - No partial images while downloading (the final image only).
/// - libavif runs single-threaded per decode (`maxThreads` 1): the manager already decodes on several queues.
///
/// - Important: Thread-safe.
public enum AVIFCodec {
    /// Registers the AVIF decoder (and the encoder, when `isEncodingAvailable`) in `registry` (default
    /// `ImageCodecRegistry.shared`), ahead of every codec registered before. Call it once.
    /// - Returns: the registrations, for `ImageCodecRegistry.unregister(_:)`.
    @discardableResult
    public static func register(in registry: ImageCodecRegistry = .shared) -> [ImageCodecRegistration] {
        var registrations = [registry.register(decoder: AVIFDecoder())]
        if isEncodingAvailable { registrations.append(registry.register(encoder: AVIFEncoder())) }
        return registrations
    }

    /// The AV1 codecs the installed libavif was built with, e.g. `dav1d [dec]:1.0.0, aom [enc/dec]:v3.6.0`
    /// (wraps `avifCodecVersions`).
    public static var codecVersions: String {
        var buffer = [CChar](repeating: 0, count: 256)
        avifCodecVersions(&buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the installed libavif can encode (it has an AV1 encoder: aom, rav1e or SVT-AV1). Debian 12's
    /// does; a libavif built with dav1d only does not, and then `register()` adds no encoder.
    public static var isEncodingAvailable: Bool {
        avifCodecName(AVIF_CODEC_CHOICE_AUTO, avifCodecFlags(AVIF_CODEC_FLAG_CAN_ENCODE.rawValue)) != nil
    }

    /// The libavif version, e.g. `0.11.1` (wraps `avifVersion`).
    public static var libraryVersion: String { String(cString: avifVersion()) }
}
