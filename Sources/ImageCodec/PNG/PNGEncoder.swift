import Foundation

/// Encodes PNG. (Not implemented yet: the codec issue fills this in.)
public enum PNGEncoder {
    /// Encodes one buffer.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.png)
    }
}
