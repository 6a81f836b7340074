import Foundation
internal import CWebImageCodecShims

/// Encodes JPEG through libjpeg-turbo (wraps `jpeg_mem_dest` compression).
///
/// Alpha is dropped: a premultiplied buffer is written as is (transparent areas become black), a straight
/// buffer is premultiplied first so the result is the same.
///
/// - Important: Stateless and thread-safe.
public enum JPEGEncoder {
    /// Encodes one buffer with `options.quality` (0…1, default 0.9), progressive when `options.isProgressive` or
    /// `options.effort` is `.smallest`, with `options.chromaSubsampling` (4:2:0 by default) and
    /// `options.jpegQuantization`'s tables (Robidoux's by default).
    ///
    /// - Throws: `ImageCodecError.encodingFailed` with libjpeg's message.
    public static func encode(_ buffer: PixelBuffer, options: EncodeOptions) throws -> Data {
        let source = buffer.converted(to: .rgba8Premultiplied)
        let quality = Int((min(max(options.quality, 0), 1) * 100).rounded())
        return try source.withUnsafeBytes { pixels in
            try EncodedBytes.collect(format: .jpeg) { out, size, message in
                wi_jpeg_encode_rgba(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(source.width),
                                    UInt32(source.height), source.bytesPerRow, Int32(quality),
                                    options.isProgressive || options.effort == .smallest ? 1 : 0,
                                    options.chromaSubsampling == .yuv444 ? 1 : 0, 0,
                                    options.jpegQuantization == .robidoux ? 1 : 0, out, size, message)
            }
        }
    }
}
