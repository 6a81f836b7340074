import Foundation

/// Best-effort images from the bytes received so far, decoded from the start of the data each time (used
/// for the formats and cases the incremental decoder has no resumable library state for: GIF, and JPEG after
/// its stream failed). PNG partial images come from `PNGStreamSession`.
///
/// - JPEG: libjpeg's decode of the truncated data; rows past the data are libjpeg's gray fill.
/// - GIF: the first frame once its data is complete.
/// - PNG, WebP: none here (still WebP goes through `WebPIncrementalSession`; animations wait for the final data).
///
/// - Important: Stateless and thread-safe.
enum PartialSnapshot {
    /// An image from `data` (a prefix of a file in `format`), or `nil` when nothing can be shown yet.
    static func decode(_ data: Data, format: ImageFormat, pixelFormat: PixelBuffer.PixelFormat,
                       limits: DecodeLimits) -> PixelBuffer? {
        do {
            switch format {
            case .jpeg: return try jpeg(data, pixelFormat: pixelFormat, limits: limits)
            case .gif:
                let options = DecodeOptions(limits: limits, pixelFormat: pixelFormat, firstFrameOnly: true,
                                            keepsOriginalData: false)
                return try GIFDecoder.decode(data, options: options).firstFrame.buffer
            default: return nil
            }
        } catch {
            // Partial data: a failure means "nothing to show yet"; the final one-shot decode reports errors.
            return nil
        }
    }

    private static func jpeg(_ data: Data, pixelFormat: PixelBuffer.PixelFormat, limits: DecodeLimits) throws -> PixelBuffer? {
        try data.withUnsafeBytes { bytes -> PixelBuffer? in
            let session = try JPEGDecodeSession(bytes: bytes)
            let header = try session.readHeader()
            try limits.check(width: header.width, height: header.height)
            let size = try session.setScale(1, 1)
            return try JPEGDecoder.decodePixels(session, width: size.width, height: size.height, format: pixelFormat).0
        }
    }
}
