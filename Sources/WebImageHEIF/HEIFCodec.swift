internal import CWebImageHEIF
import ImageCodec

/// HEIF/HEIC for WebImage, over Debian's libheif 1.15 (HEVC through libde265): registers a decoder of the
/// primary still image.
///
/// ```swift
/// import WebImageHEIF
/// HEIFCodec.register()                       // once, at start-up
/// let image = try ImageDecoder.decode(heicData)
/// ```
///
/// What it does:
/// - The primary image of a HEIF/HEIC file, with alpha, its `irot`/`imir`/`clap` transforms applied by
///   libheif; 10/12-bit images come out as 8 bits (`convert_hdr_to_8bit`). libheif 1.15 has no sequence API:
///   an HEIC sequence (`msf1`, `.heics`) gives its primary still (one frame).
/// - Bounds: `heif_context_set_maximum_image_size_limit` is set from `DecodeLimits` before the file is read,
///   the primary image's declared size, the canvas every grid or overlay item declares in its data, and the
///   size every HEVC parameter set or AV1 sequence header codes, are checked against the limits before
///   decoding (and those sizes times the decodes one item starts against `maxTotalPixels`), and the pixel
///   buffer is sized from the decoded image, never from the header (a file declaring 30000×30000 holds a
///   29×100 image; libheif 1.15 accepts it).
/// - Before libheif reads a file, structures it would follow into a crash, a hang or unbounded memory are
///   refused with `ImageCodecError.corruptData`: item references that loop or nest too deep
///   (`HEIFItemReferences`), grid tiles or overlay layers with their own alpha image, more than 256 KiB of
///   deflate-compressed metadata, item data named many times over, grids with more references than libheif
///   can look up among the items in reasonable time (`HEIFImageItems`).
/// - No partial images while downloading (the final image only); no encoder. libheif decodes on the calling
///   thread (`heif_context_set_max_decoding_threads(0)`).
///
/// - Important: Licence: Debian's `libheif1` links libx265 (GPL-2+) for its HEVC encoder, so a program that
///   links this module links GPL code. That is why this module is a separate product (`WebImageHEIF`) that
///   the `WebImage` product never links. Thread-safe.
public enum HEIFCodec {
    /// Registers the HEIF decoder in `registry` (default `ImageCodecRegistry.shared`), ahead of every codec
    /// registered before. Call it once.
    /// - Returns: the registrations, for `ImageCodecRegistry.unregister(_:)`.
    @discardableResult
    public static func register(in registry: ImageCodecRegistry = .shared) -> [ImageCodecRegistration] {
        [registry.register(decoder: HEIFDecoder())]
    }

    /// The libheif version, e.g. `1.15.1` (wraps `heif_get_version`).
    public static var libraryVersion: String { String(cString: heif_get_version()) }
}
