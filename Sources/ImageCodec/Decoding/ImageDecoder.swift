import Foundation

/// Decodes encoded image bytes of any supported format: sniffs the format, then hands over to the first
/// matching decoder of `ImageCodecRegistry.shared` (the built-in `JPEGDecoder`, `PNGDecoder`, `APNGDecoder`,
/// `GIFDecoder`, `WebPDecoder`, and whatever codecs were registered, last registered first).
///
/// ```swift
/// let image = try ImageDecoder.decode(data)                          // decoded for display
/// let info = try ImageDecoder.info(data)                             // header facts only
/// ```
///
/// - Important: Stateless and thread-safe; decoding runs on the calling thread (CPU only, no I/O).
public enum ImageDecoder {
    /// Decodes `data`. Animated images decode their first frame now and the rest on demand, unless
    /// `options.preloadAllFrames`.
    ///
    /// - Throws: `ImageCodecError` — `.emptyData`, `.unknownFormat`, `.unsupportedFormat` (no registered
    ///   decoder), `.limitExceeded` (from the header, before allocating), `.truncated`, `.corruptData` with the
    ///   library's message. When several decoders match and all fail, the most telling error.
    public static func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        try ImageCodecRegistry.shared.decode(data, options: options)
    }

    /// Reads the header facts of `data` without decoding pixels (frame counts may need a walk over chunk or
    /// block headers, never a pixel decode).
    public static func info(_ data: Data) throws -> ImageInfo {
        try ImageCodecRegistry.shared.info(data)
    }
}
