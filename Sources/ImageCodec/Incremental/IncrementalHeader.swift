internal import CWebImageWebP
import Foundation

/// Header facts read from the first bytes of a download, before the whole file is there.
///
/// PNG (IHDR) and GIF (logical screen) are read from fixed offsets; JPEG and WebP through their decoders'
/// `info`, which need only the header part (JPEG: up to the first SOS). `nil` while too few bytes arrived.
///
/// - Important: Stateless and thread-safe.
enum IncrementalHeader {
    /// The header facts of `data` (the bytes so far) in `format`, or `nil` when more bytes are needed or the
    /// header is invalid (the final one-shot decode reports that error).
    static func read(_ data: Data, format: ImageFormat) -> ImageInfo? {
        switch format {
        case .png, .apng:
            // Signature (8), IHDR length+type (8), width, height, depth, colour, compression, filter, interlace.
            guard data.count >= 29 else { return nil }
            let bytes = [UInt8](data.prefix(29))
            let width = Int(be32(bytes, 16)), height = Int(be32(bytes, 20))
            guard width > 0, height > 0 else { return nil }
            let colorType = bytes[25]
            return ImageInfo(format: format, width: width, height: height, hasAlpha: colorType & 4 != 0,
                             isProgressive: bytes[28] == 1)
        case .gif:
            guard data.count >= 10 else { return nil }
            let bytes = [UInt8](data.prefix(10))
            let width = Int(bytes[6]) | Int(bytes[7]) << 8, height = Int(bytes[8]) | Int(bytes[9]) << 8
            guard width > 0, height > 0 else { return nil }
            return ImageInfo(format: .gif, width: width, height: height, hasAlpha: false)
        case .jpeg:
            return headerOrNil { try JPEGDecoder.info(data) }.flatMap { $0.width > 0 && $0.height > 0 ? $0 : nil }
        case .webp:
            return headerOrNil { try WebPDecoder.info(data) } ?? webpFeatures(data)
        default:
            return nil
        }
    }

    /// Runs a header parse over partial data: a failure means "not enough bytes yet" here, because the
    /// one-shot decode of the final data reports the real error.
    private static func headerOrNil(_ parse: () throws -> ImageInfo) -> ImageInfo? {
        do { return try parse() } catch { return nil }
    }

    /// A WebP's size and alpha from `WebPGetFeatures`, which needs only the first chunk headers.
    private static func webpFeatures(_ data: Data) -> ImageInfo? {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBytes { bytes -> VP8StatusCode in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return VP8_STATUS_NOT_ENOUGH_DATA }
            return WebPGetFeatures(base, bytes.count, &features)
        }
        guard status == VP8_STATUS_OK, features.width > 0, features.height > 0 else { return nil }
        return ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height),
                         hasAlpha: features.has_alpha != 0)
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}
