import Foundation

/// Decodes encoded image bytes of any supported format: sniffs the format, then hands over to the format's
/// decoder (`JPEGDecoder`, `PNGDecoder`, `APNGDecoder`, `GIFDecoder`, `WebPDecoder`).
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
    /// - Throws: `ImageCodecError` — `.emptyData`, `.unknownFormat`, `.unsupportedFormat`, `.limitExceeded`
    ///   (from the header, before allocating), `.truncated`, `.corruptData` with the library's message.
    public static func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        guard !data.isEmpty else { throw ImageCodecError.emptyData }
        switch ImageFormat.sniff(data) {
        case .jpeg: return try JPEGDecoder.decode(data, options: options)
        case .png: return try PNGDecoder.decode(data, options: options)
        case .apng: return try APNGDecoder.decode(data, options: options)
        case .gif: return try GIFDecoder.decode(data, options: options)
        case .webp: return try WebPDecoder.decode(data, options: options)
        case .unknown: throw ImageCodecError.unknownFormat
        case let other: throw ImageCodecError.unsupportedFormat(other)
        }
    }

    /// Reads the header facts of `data` without decoding pixels (frame counts may need a walk over chunk or
    /// block headers, never a pixel decode).
    public static func info(_ data: Data) throws -> ImageInfo {
        guard !data.isEmpty else { throw ImageCodecError.emptyData }
        switch ImageFormat.sniff(data) {
        case .jpeg: return try JPEGDecoder.info(data)
        case .png: return try PNGDecoder.info(data)
        case .apng: return try APNGDecoder.info(data)
        case .gif: return try GIFDecoder.info(data)
        case .webp: return try WebPDecoder.info(data)
        case .unknown: throw ImageCodecError.unknownFormat
        case let other: throw ImageCodecError.unsupportedFormat(other)
        }
    }
}
