import Foundation

/// Encodes WebP. (Not implemented yet: the codec issue fills this in.)
public enum WebPEncoder {
    /// Encodes one buffer.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.webp)
    }
    /// Encodes an animation.
    public static func encodeAnimation(_ frames: [ImageFrame], loopCount: Int, options: EncodeOptions) throws -> Data {
        throw ImageCodecError.unsupportedEncoding(.webp)
    }
}
