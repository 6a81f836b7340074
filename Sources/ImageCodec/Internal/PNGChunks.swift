import Foundation

/// One chunk of a PNG stream: where its type and data sit in the file.
struct PNGChunk {
    /// The four type bytes as a big-endian number (compare with `PNGChunk.type("IDAT")`).
    var type: UInt32
    /// Offset of the chunk's length field (the chunk spans `start..<dataEnd + 4`).
    var start: Int
    /// The data bytes' range in the file.
    var data: Range<Int>
    /// The stored CRC.
    var storedCRC: UInt32

    /// The whole chunk (length, type, data, CRC) as a range of the file.
    var whole: Range<Int> { start..<(data.upperBound + 4) }

    /// A type code from its four ASCII letters.
    static func type(_ name: StaticString) -> UInt32 {
        let p = name.utf8Start
        return UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
    }
}

/// Reads and writes PNG chunk structure (no pixel data), with overflow-checked offsets.
enum PNGChunks {
    /// The 8-byte PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A big-endian UInt32 at `offset` (the caller checked the bounds).
    static func readUInt32(_ b: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(b[offset]) << 24 | UInt32(b[offset + 1]) << 16 | UInt32(b[offset + 2]) << 8 | UInt32(b[offset + 3])
    }

    /// A big-endian UInt16 at `offset` (the caller checked the bounds).
    static func readUInt16(_ b: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(b[offset]) << 8 | UInt16(b[offset + 1])
    }

    /// Every chunk up to and including IEND. Throws `corruptData` for a bad signature, a length over 2^31-1
    /// or a chunk running past the end of the data (`truncated`).
    static func walk(_ b: UnsafeRawBufferPointer, format: ImageFormat) throws -> [PNGChunk] {
        guard b.count >= 8, b.prefix(8).elementsEqual(signature) else {
            throw ImageCodecError.corruptData(format: format, message: "not a PNG signature")
        }
        var chunks: [PNGChunk] = []
        var offset = 8
        while true {
            guard b.count - offset >= 12 else { throw ImageCodecError.truncated(format: format) }
            let length = Int(readUInt32(b, offset))
            guard length <= Int(Int32.max) else {
                throw ImageCodecError.corruptData(format: format, message: "chunk length \(length) over 2^31-1")
            }
            guard b.count - offset - 12 >= length else { throw ImageCodecError.truncated(format: format) }
            let dataStart = offset + 8
            let chunk = PNGChunk(type: readUInt32(b, offset + 4), start: offset, data: dataStart..<(dataStart + length),
                                 storedCRC: readUInt32(b, dataStart + length))
            chunks.append(chunk)
            offset = dataStart + length + 4
            if chunk.type == PNGChunk.type("IEND") { return chunks }
        }
    }

    /// Whether a chunk's stored CRC matches its type and data.
    static func hasValidCRC(_ chunk: PNGChunk, in b: UnsafeRawBufferPointer) -> Bool {
        CRC32.update(0, UnsafeRawBufferPointer(rebasing: b[(chunk.start + 4)..<chunk.data.upperBound])) == chunk.storedCRC
    }

    /// Appends a chunk (length, type, data, CRC) to `out`.
    static func append(type: UInt32, data: UnsafeRawBufferPointer, to out: inout Data) {
        var header = [UInt8](repeating: 0, count: 8)
        put(UInt32(data.count), into: &header, at: 0)
        put(type, into: &header, at: 4)
        var crc = header[4..<8].withUnsafeBytes { CRC32.update(0, $0) }
        crc = CRC32.update(crc, data)
        out.append(contentsOf: header)
        out.append(contentsOf: data)
        var tail = [UInt8](repeating: 0, count: 4)
        put(crc, into: &tail, at: 0)
        out.append(contentsOf: tail)
    }

    /// Appends a chunk whose data is `bytes`.
    static func append(type: UInt32, bytes: [UInt8], to out: inout Data) {
        bytes.withUnsafeBytes { append(type: type, data: $0, to: &out) }
    }

    /// Writes `value` big-endian into `bytes[offset..<offset+4]`.
    static func put(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// Writes `value` big-endian into `bytes[offset..<offset+2]`.
    static func put(_ value: UInt16, into bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }
}
