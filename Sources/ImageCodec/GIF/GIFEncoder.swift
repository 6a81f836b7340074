import Foundation

/// Encodes GIF. (Not implemented yet: the codec issue fills this in.)
public enum GIFEncoder {
    /// Encodes frames.
    public static func encode(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.gif)
    }
}
