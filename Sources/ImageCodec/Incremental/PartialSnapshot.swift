import Foundation

/// Best-effort images from the bytes received so far, decoded from the start of the data each time (used
/// for the formats and cases the incremental decoder has no resumable library state for).
///
/// - PNG: rows so far through libpng's row reader; Adam7 passes so far through libpng's display rows (each
///   pass's pixels replicated over their blocks, so a coarse full image); rows not reached stay transparent.
/// - Baseline JPEG: libjpeg's decode of the truncated data; rows past the data are libjpeg's gray fill.
/// - GIF: the first frame once its data is complete.
/// - WebP: none here (still WebP goes through `WebPIncrementalSession`; animations wait for the final data).
///
/// - Important: Stateless and thread-safe.
enum PartialSnapshot {
    /// An image from `data` (a prefix of a file in `format`), or `nil` when nothing can be shown yet.
    static func decode(_ data: Data, format: ImageFormat, pixelFormat: PixelBuffer.PixelFormat,
                       limits: DecodeLimits) -> PixelBuffer? {
        do {
            switch format {
            case .png, .apng: return try png(data, pixelFormat: pixelFormat, limits: limits)
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

    /// libpng's sequential reader asks for a whole IDAT chunk at once, so a prefix ending inside one would give
    /// no rows from it: shorten that chunk's length to the bytes present (its CRC is then missing, and libpng
    /// stops with "data ends early" after decoding the rows those bytes hold).
    static func pngPrefixEndingOnChunk(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            let available = bytes.count - offset - 8
            guard length > available else {
                offset += 12 + length
                continue
            }
            var prefix = Data(bytes[0 ..< offset + 8 + available])
            let isIDAT = bytes[offset + 4 ..< offset + 8].elementsEqual(Array("IDAT".utf8))
            guard isIDAT, available > 0 else { return Data(bytes[0 ..< offset]) }
            prefix.replaceSubrange(offset ..< offset + 4, with: [UInt8(truncatingIfNeeded: available >> 24),
                                                                 UInt8(truncatingIfNeeded: available >> 16),
                                                                 UInt8(truncatingIfNeeded: available >> 8),
                                                                 UInt8(truncatingIfNeeded: available)])
            return prefix
        }
        return data
    }

    private static func png(_ data: Data, pixelFormat: PixelBuffer.PixelFormat, limits: DecodeLimits) throws -> PixelBuffer? {
        try pngPrefixEndingOnChunk(data).withUnsafeBytes { bytes -> PixelBuffer? in
            let session = try PNGDecodeSession(bytes: bytes, format: .png)
            let header = try session.readInfo()
            try limits.check(width: header.width, height: header.height)
            var buffer = try PixelBuffer(width: header.width, height: header.height, pixelFormat: .rgba8)
            let passes = try session.startRows()
            let stride = buffer.bytesPerRow
            var rowsRead = 0
            buffer.withUnsafeMutableBytes { pixels in
                guard let base = pixels.baseAddress else { return }
                do {
                    for _ in 0..<passes {
                        for y in 0..<header.height {
                            try session.readDisplayRow(into: base + y * stride)
                            rowsRead += 1
                        }
                    }
                } catch {
                    // The data ended: keep the rows (or passes) read so far.
                }
            }
            guard rowsRead > 0 else { return nil }
            return buffer.converted(to: pixelFormat)
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
