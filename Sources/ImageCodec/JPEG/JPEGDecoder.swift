import Foundation

/// Decodes JPEG data. (Not implemented yet: the codec issue fills this in.)
///
/// - Important: Stateless and thread-safe.
public enum JPEGDecoder {
    /// Decodes `data`.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        throw ImageCodecError.unsupportedFormat(.jpeg)
    }

    /// Reads header facts without decoding pixels.
    public static func info(_ data: Data) throws -> ImageInfo {
        throw ImageCodecError.unsupportedFormat(.jpeg)
    }
}
