import CWebImageZlib
import Foundation

/// Decompression bombs for the hostile-source tests: small, real files (encoded by the caller with WebImage's
/// own encoders) whose headers are patched to declare huge dimensions, and a progressive JPEG of too many scans.
///
/// - Important: Stateless; thread-safe.
public enum DecodeBombs {
    /// Thrown when the given bytes are not laid out as expected.
    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    /// A PNG with its IHDR (and the IHDR's CRC) rewritten to `width × height`.
    public static func png(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 33, Array(bytes[12..<16]) == Array("IHDR".utf8) else { throw Malformed(description: "no IHDR") }
        put32BE(&bytes, 16, width)
        put32BE(&bytes, 20, height)
        let crc = bytes[12..<29].withUnsafeBufferPointer { crc32(0, $0.baseAddress, 17) }
        put32BE(&bytes, 29, Int(crc))
        return Data(bytes)
    }

    /// A baseline or progressive JPEG with its SOF frame size rewritten to `width × height`.
    public static func jpeg(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if (0xC0...0xC2).contains(marker) {
                bytes[offset + 5] = UInt8(height >> 8 & 0xFF); bytes[offset + 6] = UInt8(height & 0xFF)
                bytes[offset + 7] = UInt8(width >> 8 & 0xFF); bytes[offset + 8] = UInt8(width & 0xFF)
                return Data(bytes)
            }
            offset += 2 + length
        }
        throw Malformed(description: "no SOF0/1/2 marker")
    }

    /// A GIF with its logical screen and first image descriptor rewritten to `width × height`.
    public static func gif(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 13, Array(bytes[0..<3]) == Array("GIF".utf8) else { throw Malformed(description: "not a GIF") }
        put16LE(&bytes, 6, width)
        put16LE(&bytes, 8, height)
        var offset = 13
        if bytes[10] & 0x80 != 0 { offset += 3 << (Int(bytes[10] & 0x07) + 1) }
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x2C:
                put16LE(&bytes, offset + 5, width)
                put16LE(&bytes, offset + 7, height)
                return Data(bytes)
            case 0x21:
                offset += 2
                while offset < bytes.count, bytes[offset] != 0 { offset += Int(bytes[offset]) + 1 }
                offset += 1
            default: throw Malformed(description: "unexpected GIF block \(bytes[offset])")
            }
        }
        throw Malformed(description: "no image descriptor")
    }

    /// A simple lossy WebP (RIFF, VP8) with its VP8 frame size rewritten to `width × height` (each < 16384).
    public static func webp(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 30, Array(bytes[12..<16]) == Array("VP8 ".utf8), bytes[23...25] == [0x9D, 0x01, 0x2A] else {
            throw Malformed(description: "not a simple lossy WebP")
        }
        put16LE(&bytes, 26, width & 0x3FFF)
        put16LE(&bytes, 28, height & 0x3FFF)
        return Data(bytes)
    }

    /// An animated WebP (RIFF with VP8X) with its canvas rewritten to `width × height` (each ≤ 16,777,216),
    /// its frames left as they are: two 1 × 1 frames encoded by the caller make a 140-byte file that declares
    /// an 8000 × 8000 canvas (the frames still lie inside it, so libwebp's demuxer accepts it).
    public static func animatedWebP(_ data: Data, canvasWidth width: Int, canvasHeight height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 30, Array(bytes[12..<16]) == Array("VP8X".utf8), bytes[20] & 0x02 != 0 else {
            throw Malformed(description: "not an animated WebP with VP8X")
        }
        for i in 0..<3 {
            bytes[24 + i] = UInt8((width - 1) >> (8 * i) & 0xFF)
            bytes[27 + i] = UInt8((height - 1) >> (8 * i) & 0xFF)
        }
        return Data(bytes)
    }

    /// A GIF with only its logical screen rewritten to `width × height` (its frames, encoded by the caller,
    /// stay as they are): two 1 × 1 frames on an 8000 × 8000 screen.
    public static func gifScreen(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard bytes.count > 13, Array(bytes[0..<3]) == Array("GIF".utf8) else { throw Malformed(description: "not a GIF") }
        put16LE(&bytes, 6, width)
        put16LE(&bytes, 8, height)
        return Data(bytes)
    }

    /// An APNG, built here, of two 1 × 1 frames (opaque red, then opaque blue, each `fcTL` + `fdAT`, each
    /// disposed to background) on a `width × height` canvas, after a default image that is not part of the
    /// animation (its `IDAT` holds one 1 × 1 row and is never decoded by an animation decode): about 200 bytes
    /// declaring, say, 8000 × 8000. A compositor at canvas size that hands frame 0 out and then clears its
    /// rectangle copies the whole canvas (copy on write).
    public static func animatedPNG(canvasWidth width: Int, canvasHeight height: Int) -> Data {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ body: [UInt8]) {
            var lengthBytes = [UInt8](repeating: 0, count: 4)
            put32BE(&lengthBytes, 0, body.count)
            let typed = Array(type.utf8) + body
            var crcBytes = [UInt8](repeating: 0, count: 4)
            put32BE(&crcBytes, 0, Int(typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }))
            out += lengthBytes + typed + crcBytes
        }
        func be32(_ value: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 4)
            put32BE(&bytes, 0, value)
            return bytes
        }
        func zlib(_ raw: [UInt8]) -> [UInt8] {
            var size = compressBound(UInt(raw.count))
            var compressed = [UInt8](repeating: 0, count: Int(size))
            _ = compressed.withUnsafeMutableBufferPointer { out in
                raw.withUnsafeBufferPointer { compress(out.baseAddress, &size, $0.baseAddress, UInt(raw.count)) }
            }
            return Array(compressed.prefix(Int(size)))
        }
        func frameControl(sequence: Int) -> [UInt8] {
            be32(sequence) + be32(1) + be32(1) + be32(0) + be32(0) + [0, 10, 0, 100, 1, 0]  // dispose: background
        }
        chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0])
        chunk("acTL", be32(2) + be32(0))
        chunk("IDAT", zlib([0, 0, 0, 0, 0]))
        chunk("fcTL", frameControl(sequence: 0))
        chunk("fdAT", be32(1) + zlib([0, 255, 0, 0, 255]))
        chunk("fcTL", frameControl(sequence: 2))
        chunk("fdAT", be32(3) + zlib([0, 0, 0, 255, 255]))
        chunk("IEND", [])
        return Data(out)
    }

    /// A progressive JPEG whose last scan (its SOS segment and entropy-coded data) is repeated so the file has
    /// `scans` scans in all. libjpeg accepts a repeated scan with a warning ("Inconsistent progression
    /// sequence"), so only a scan limit stops it.
    public static func manyScans(_ progressiveJPEG: Data, scans: Int) throws -> Data {
        let bytes = [UInt8](progressiveJPEG)
        var starts: [Int] = []
        var index = 2
        while index + 1 < bytes.count {
            if bytes[index] == 0xFF, bytes[index + 1] == 0xDA { starts.append(index) }
            index += 1
        }
        guard let last = starts.last, bytes.count >= 2, bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else {
            throw Malformed(description: "no SOS or EOI")
        }
        let scan = bytes[last..<(bytes.count - 2)]
        var out = Array(bytes[..<(bytes.count - 2)])
        for _ in 0..<max(0, scans - starts.count) { out += scan }
        out += [0xFF, 0xD9]
        return Data(out)
    }

    /// A real, valid mid-gray baseline JPEG of any size up to 65500 × 65500, built directly: one component,
    /// Huffman tables of a single 1-bit code each, so every 8 × 8 block is the two bits "DC difference 0, end of
    /// block" and the file is about `width × height / 256` bytes (8000 × 8000: 250 KB). Cheap to make and to
    /// serve; it decodes like any photo of that size (libjpeg does the full IDCT and colour work).
    public static func grayJPEG(width: Int, height: Int) -> Data {
        var out: [UInt8] = [0xFF, 0xD8]
        out += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)                  // DQT 0: all 1
        out += [0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 0xFF),
                UInt8(width >> 8), UInt8(width & 0xFF), 0x01, 0x01, 0x11, 0x00]                    // SOF0, 1 comp
        let oneCode: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 15) + [0x00]                // one 1-bit code → 0
        out += [0xFF, 0xC4, 0x00, 0x14, 0x00] + oneCode                                           // DHT DC 0
        out += [0xFF, 0xC4, 0x00, 0x14, 0x10] + oneCode                                           // DHT AC 0 (EOB)
        out += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]                       // SOS
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        let bits = blocks * 2
        out += [UInt8](repeating: 0, count: bits / 8)
        if bits % 8 != 0 { out.append(UInt8(0xFF >> (bits % 8))) }                                // pad with 1 bits
        out += [0xFF, 0xD9]
        return Data(out)
    }

    private static func put32BE(_ bytes: inout [UInt8], _ offset: Int, _ value: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(value >> (24 - 8 * i) & 0xFF) }
    }

    private static func put16LE(_ bytes: inout [UInt8], _ offset: Int, _ value: Int) {
        bytes[offset] = UInt8(value & 0xFF)
        bytes[offset + 1] = UInt8(value >> 8 & 0xFF)
    }
}
