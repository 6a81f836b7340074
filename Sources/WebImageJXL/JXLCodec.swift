internal import CWebImageJXL
import ImageCodec

/// JPEG XL for WebImage, over Debian's libjxl 0.7: registers a JPEG XL decoder (stills and animations, with
/// partial images while downloading) and encoder (`JXLEncoder`: stills, alpha, animations; lossless JPEG
/// recompression with `JXLEncoder.recompressJPEG`).
///
/// ```swift
/// import WebImageJXL
/// JXLCodec.register()                        // once, at start-up
/// let image = try ImageDecoder.decode(jxlData)
/// ```
///
/// What it does:
/// - Stills and animations: every frame with its duration (ticks × `tps_denominator / tps_numerator`) and the
///   loop count (`num_loops`, 0 = forever). libjxl decodes frames in order, so an animation's frames are all
///   decoded at once (within `DecodeLimits.maxTotalPixels`), not on demand.
/// - Orientation is applied by libjxl (the size is the displayed one); alpha comes out straight (libjxl
///   un-premultiplies) then is premultiplied for display; 10/12/16-bit and float images come out as 8 bits.
/// - Partial images while downloading (`IncrementalDecoder`): libjxl's `JxlDecoderFlushImage` renders what
///   the bytes so far hold of the first frame (a progressive file shows a blurry full image early).
/// - Bounds: libjxl 0.7 has no memory limit and aborts the process when an allocation fails, so the size is
///   checked against `DecodeLimits` at `JXL_DEC_BASIC_INFO`, before libjxl allocates any frame or pixel buffer
///   (a 47 KB file declaring 16384² otherwise takes 1.06 GB), and each frame header is counted against
///   `maxFrameCount` and `maxTotalPixels` before its pixels. `maxPixelSize` resizes after a full-size decode.
/// - Encoding: `JXLEncoder` (lossy at effort 4–6 by `EncodeOptions.effort`, lossless at 4; one thread, the deadline of `EncodeOptions` checked between frames and
///   output chunks).
/// - Single-threaded per decode (no parallel runner): the manager already decodes on several queues.
///
/// - Important: Thread-safe.
public enum JXLCodec {
    /// Registers the JPEG XL decoder and encoder in `registry` (default `ImageCodecRegistry.shared`), ahead of
    /// every codec registered before. Call it once.
    /// - Returns: the registrations, for `ImageCodecRegistry.unregister(_:)`.
    @discardableResult
    public static func register(in registry: ImageCodecRegistry = .shared) -> [ImageCodecRegistration] {
        [registry.register(decoder: JXLDecoder()), registry.register(encoder: JXLEncoder())]
    }

    /// The libjxl version, e.g. `0.7.0` (wraps `JxlDecoderVersion`).
    public static var libraryVersion: String {
        let v = JxlDecoderVersion()
        return "\(v / 1_000_000).\(v / 1_000 % 1_000).\(v % 1_000)"
    }
}
