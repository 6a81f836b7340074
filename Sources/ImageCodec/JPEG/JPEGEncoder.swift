import Foundation

/// Encodes JPEG. (Not implemented yet: the codec issue fills this in.)
public enum JPEGEncoder {
    /// Encodes one buffer.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.jpeg)
    }
}
