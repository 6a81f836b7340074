internal import CWebImageZlib
import Foundation

/// Writes an ICC profile into encoded JPEG, PNG and WebP files: JPEG APP2 `ICC_PROFILE` chunks (after SOI and
/// any JFIF APP0), PNG `iCCP` (zlib-compressed, right after IHDR), WebP `ICCP` (the file becomes extended VP8X if
/// it was simple). Our encoders write no EXIF, so no EXIF colour-space tag can contradict the profile.
///
/// - Important: Stateless and thread-safe.
enum ICCEmbedding {
    /// Most profile bytes in one JPEG APP2 chunk: 65535 − 2 (length) − 14 ("ICC_PROFILE\0", sequence, count).
    static let jpegChunkBytes = 65_519

    /// `encoded` with `profile` embedded, or `encoded` unchanged for another format or a file it cannot parse.
    static func embed(_ profile: Data, in encoded: Data, format: ImageFormat, width: Int, height: Int) -> Data {
        guard !profile.isEmpty, profile.count <= LittleCMS.maxProfileBytes else { return encoded }
        switch format {
        case .jpeg: return jpeg(profile, encoded) ?? encoded
        case .png: return png(profile, encoded) ?? encoded
        case .webp: return webp(profile, encoded, width: width, height: height) ?? encoded
        default: return encoded
        }
    }

    private static func jpeg(_ profile: Data, _ data: Data) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var insertAt = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count > 6 {
            insertAt = 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
            guard insertAt <= bytes.count else { return nil }
        }
        let chunks = (profile.count + jpegChunkBytes - 1) / jpegChunkBytes
        guard chunks <= 255 else { return nil }
        var markers: [UInt8] = []
        let source = [UInt8](profile)
        for index in 0..<chunks {
            let part = source[(index * jpegChunkBytes)..<min(source.count, (index + 1) * jpegChunkBytes)]
            let length = 2 + 14 + part.count
            markers += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            markers += Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(chunks)]
            markers += part
        }
        var out = Array(bytes[..<insertAt])
        out += markers
        out += bytes[insertAt...]
        return Data(out)
    }

    private static func png(_ profile: Data, _ data: Data) -> Data? {
        guard data.count > 33, data.prefix(8).elementsEqual(PNGChunks.signature) else { return nil }
        guard let compressed = deflate(profile) else { return nil }
        var body = Array("ICC profile".utf8) + [0, 0]
        body += compressed
        var out = Data(data.prefix(33))  // signature + IHDR (always 13 bytes of data)
        PNGChunks.append(type: PNGChunk.type("iCCP"), bytes: body, to: &out)
        out.append(data.dropFirst(33))
        return out
    }

    private static func webp(_ profile: Data, _ data: Data, width: Int, height: Int) -> Data? {
        var bytes = [UInt8](data)
        guard bytes.count >= 20, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else {
            return nil
        }
        var iccp = Array("ICCP".utf8) + le32(profile.count) + [UInt8](profile)
        if profile.count % 2 == 1 { iccp.append(0) }
        let fourCC = String(decoding: bytes[12..<16], as: UTF8.self)
        if fourCC == "VP8X" {
            guard bytes.count >= 30 else { return nil }
            bytes[20] |= 0x20
            bytes.insert(contentsOf: iccp, at: 30)
        } else {
            guard fourCC == "VP8 " || fourCC == "VP8L", width > 0, height > 0, width <= 1 << 24, height <= 1 << 24 else {
                return nil
            }
            // VP8L's header holds an alpha hint (bit 28 after the signature byte); lossy VP8 has no alpha here.
            let hasAlpha = fourCC == "VP8L" && bytes.count >= 25 && bytes[24] & 0x10 != 0
            var vp8x = Array("VP8X".utf8) + le32(10) + [0x20 | (hasAlpha ? 0x10 : 0), 0, 0, 0]
            vp8x += le24(width - 1) + le24(height - 1)
            bytes.insert(contentsOf: vp8x + iccp, at: 12)
        }
        let riffSize = le32(bytes.count - 8)
        bytes.replaceSubrange(4..<8, with: riffSize)
        return Data(bytes)
    }

    private static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
    private static func le24(_ v: Int) -> [UInt8] { (0..<3).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }

    /// zlib-compresses `data` (wraps `compress2`, level 9).
    static func deflate(_ data: Data) -> [UInt8]? {
        var size = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = data.withUnsafeBytes { src in
            out.withUnsafeMutableBufferPointer { dst in
                compress2(dst.baseAddress, &size, src.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(data.count), 9)
            }
        }
        guard status == Z_OK else { return nil }
        return Array(out[0..<Int(size)])
    }
}
