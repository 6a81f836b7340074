import Foundation
internal import CWebImageCodecShims

/// Encodes PNG through libpng: 8-bit RGBA with straight alpha (RGB when every pixel is opaque), optionally
/// Adam7-interlaced (`options.isProgressive`).
///
/// - Important: Stateless and thread-safe.
public enum PNGEncoder {
    /// Encodes one buffer; a premultiplied buffer is un-premultiplied first (PNG stores straight alpha).
    ///
    /// - Throws: `ImageCodecError.encodingFailed` with libpng's message.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        try encode(buffer, interlaced: options.isProgressive, forceAlpha: false)
    }

    /// Encodes one buffer; `forceAlpha` always writes colour type 6 (APNG frames must share one IHDR).
    static func encode(_ buffer: PixelBuffer, interlaced: Bool, forceAlpha: Bool) throws -> Data {
        let source = buffer.converted(to: .rgba8)
        let hasAlpha = forceAlpha || !source.isOpaque
        return try source.withUnsafeBytes { pixels in
            try EncodedBytes.collect(format: .png) { out, size, message in
                wi_png_encode_rgba(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(source.width),
                                   UInt32(source.height), source.bytesPerRow, hasAlpha ? 1 : 0, interlaced ? 1 : 0,
                                   out, size, message)
            }
        }
    }
}
