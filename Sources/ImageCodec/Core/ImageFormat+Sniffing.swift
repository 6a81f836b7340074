import Foundation

extension ImageFormat {
    /// Recognises the format of encoded image bytes from their first bytes.
    ///
    /// ```swift
    /// let format = ImageFormat.sniff(data)   // .webp
    /// ```
    /// Never traps on any input: empty, one byte or truncated headers give `.unknown` (or the best
    /// recognisable format: a PNG whose chunk walk is cut short before `IDAT` is reported as `.png`).
    ///
    /// - Important: Thread-safe; O(1) except for APNG detection, which walks chunk headers (not payloads)
    ///   until the first `IDAT`.
    public static func sniff<Bytes: Collection>(_ bytes: Bytes) -> ImageFormat where Bytes.Element == UInt8 {
        if let contiguous = bytes.withContiguousStorageIfAvailable({ sniff(UnsafeRawBufferPointer($0)) }) {
            return contiguous
        }
        return Array(bytes).withUnsafeBytes { sniff($0) }
    }

    /// Recognises the format of the bytes at `buffer`. See `sniff(_:)`.
    public static func sniff(_ buffer: UnsafeRawBufferPointer) -> ImageFormat {
        let b = buffer
        let n = b.count
        func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard n >= offset + prefix.count else { return false }
            for i in 0..<prefix.count where b[offset + i] != prefix[i] { return false }
            return true
        }
        // SOI alone, as libjpeg requires: it skips garbage between SOI and the next marker.
        if starts(with: [0xFF, 0xD8]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return isAnimatedPNG(b) ? .apng : .png
        }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        if starts(with: [0x42, 0x4D]) && n >= 14 { return .bmp }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(with: [0x00, 0x00, 0x01, 0x00]) && n >= 6 { return .ico }
        if starts(with: [0xFF, 0x0A]) { return .jpegXL }
        if starts(with: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jpegXL }
        if starts(with: Array("ftyp".utf8), at: 4), n >= 12 {
            // The major brand and every compatible brand count: `mif1`/`msf1` (the generic HEIF brands) are
            // often the major brand of an AVIF or HEIC file whose codec brand is only among the compatible ones.
            let brands = isoBrands(b)
            if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
            if brands.contains(where: { ["heic", "heix", "heim", "heis", "hevc", "hevx"].contains($0) }) { return .heif }
            if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        }
        return .unknown
    }

    /// The most bytes of an ISO BMFF `ftyp` box `sniff` reads (28 compatible brands).
    static let maximumFTYPLength = 128

    /// How many first bytes `sniff` needs to see to give its final answer for data starting like `prefix`:
    /// 16, or the whole `ftyp` box (up to `maximumFTYPLength`) for ISO BMFF, whose compatible brands decide
    /// between AVIF and HEIF. `IncrementalDecoder` waits for that many bytes before it sniffs.
    public static func sniffLength<Bytes: Collection>(_ prefix: Bytes) -> Int where Bytes.Element == UInt8 {
        let head = Array(prefix.prefix(8))
        guard head.count == 8, head[4...7].elementsEqual("ftyp".utf8) else { return 16 }
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        return min(max(boxSize, 16), maximumFTYPLength)
    }

    /// The major and compatible brands of an ISO BMFF `ftyp` box (bounded by the box size, the buffer and
    /// `maximumFTYPLength`).
    private static func isoBrands(_ b: UnsafeRawBufferPointer) -> [String] {
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let end = min(b.count, max(boxSize, 12), maximumFTYPLength)
        var brands: [String] = []
        var offset = 8
        while offset + 4 <= end {
            if offset != 12 { // bytes 12..<16 are the minor version, not a brand
                brands.append(String(decoding: b[offset..<offset + 4], as: UTF8.self))
            }
            offset += 4
        }
        return brands
    }

    /// Whether a PNG stream has an `acTL` chunk before its first `IDAT` (the APNG rule).
    ///
    /// Walks chunk headers with overflow-checked offsets; stops at `IDAT`, `IEND`, or the end of the buffer.
    private static func isAnimatedPNG(_ b: UnsafeRawBufferPointer) -> Bool {
        var offset = 8
        while offset + 8 <= b.count {
            let length = Int(b[offset]) << 24 | Int(b[offset + 1]) << 16 | Int(b[offset + 2]) << 8 | Int(b[offset + 3])
            let type = (b[offset + 4], b[offset + 5], b[offset + 6], b[offset + 7])
            if type == (0x61, 0x63, 0x54, 0x4C) { return true }   // acTL
            if type == (0x49, 0x44, 0x41, 0x54) || type == (0x49, 0x45, 0x4E, 0x44) { return false } // IDAT, IEND
            // length(4) + type(4) + data(length) + crc(4); PNG lengths are at most 2^31-1.
            guard length <= Int(Int32.max) else { return false }
            let (next, overflow) = offset.addingReportingOverflow(12 + length)
            if overflow { return false }
            offset = next
        }
        return false
    }
}
