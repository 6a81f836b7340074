import Foundation

/// Encodes APNG. (Not implemented yet: the codec issue fills this in.)
public enum APNGEncoder {
    /// Encodes frames.
    public static func encode(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.apng)
    }
}
