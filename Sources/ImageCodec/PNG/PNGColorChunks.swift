internal import CWebImageZlib
import Foundation

/// Reads a PNG's colour chunks before the first IDAT: `iCCP` (inflated, at most `LittleCMS.maxProfileBytes`),
/// `sRGB`, `cICP`, `gAMA`, `cHRM`. Never throws: a chunk that is short, has a bad CRC or does not inflate is
/// skipped with a debug log (libpng treats them as ancillary-chunk warnings), and a stream that ends early
/// just ends the walk. The colour stage applies libpng's precedence (iCCP, sRGB, cICP, gAMA + cHRM).
///
/// - Important: Stateless and thread-safe.
enum PNGColorChunks {
    /// What the chunks say, or `nil` when none of them is there.
    static func read(_ b: UnsafeRawBufferPointer) -> ImageColorSpace? {
        guard b.count >= 8, b.prefix(8).elementsEqual(PNGChunks.signature) else { return nil }
        var colorSpace = ImageColorSpace()
        var offset = 8
        while b.count - offset >= 12 {
            let length = Int(PNGChunks.readUInt32(b, offset))
            guard length <= Int(Int32.max), b.count - offset - 12 >= length else { break }
            let type = PNGChunks.readUInt32(b, offset + 4)
            let data = (offset + 8)..<(offset + 8 + length)
            let chunk = PNGChunk(type: type, start: offset, data: data, storedCRC: PNGChunks.readUInt32(b, data.upperBound))
            offset = data.upperBound + 4
            if type == PNGChunk.type("IDAT") || type == PNGChunk.type("IEND") { break }
            let interesting = [PNGChunk.type("iCCP"), PNGChunk.type("sRGB"), PNGChunk.type("cICP"),
                               PNGChunk.type("gAMA"), PNGChunk.type("cHRM")]
            guard interesting.contains(type) else { continue }
            guard PNGChunks.hasValidCRC(chunk, in: b) else {
                ColorLog.record("PNG colour chunk with a bad CRC ignored")
                continue
            }
            let body = UnsafeRawBufferPointer(rebasing: b[data])
            switch type {
            case PNGChunk.type("iCCP"): if colorSpace.iccProfile == nil { colorSpace.iccProfile = inflateICCP(body) }
            case PNGChunk.type("sRGB"): colorSpace.isDeclaredSRGB = length == 1
            case PNGChunk.type("cICP") where length == 4:
                colorSpace.cicp = ImageColorSpace.CICP(colorPrimaries: body[0], transferCharacteristics: body[1],
                                                       matrixCoefficients: body[2], isFullRange: body[3] != 0)
            case PNGChunk.type("gAMA") where length == 4:
                let value = PNGChunks.readUInt32(body, 0)
                if value > 0 { colorSpace.gamma = Double(value) / 100_000 }
            case PNGChunk.type("cHRM") where length == 32:
                let v = (0..<8).map { Double(PNGChunks.readUInt32(body, $0 * 4)) / 100_000 }
                colorSpace.chromaticities = ImageColorSpace.Chromaticities(whiteX: v[0], whiteY: v[1], redX: v[2], redY: v[3],
                                                                           greenX: v[4], greenY: v[5], blueX: v[6], blueY: v[7])
            default: continue
            }
        }
        return colorSpace.isEmpty ? nil : colorSpace
    }

    /// The profile of an `iCCP` body (name, NUL, method 0, zlib stream), or `nil` (logged) when it is malformed
    /// or inflates to more than `LittleCMS.maxProfileBytes`.
    static func inflateICCP(_ body: UnsafeRawBufferPointer) -> Data? {
        guard let nul = body.prefix(80).firstIndex(of: 0), nul >= 1, body.count > nul + 2, body[nul + 1] == 0 else {
            ColorLog.record("PNG iCCP chunk malformed: ignored")
            return nil
        }
        let compressed = UnsafeRawBufferPointer(rebasing: body[(nul + 2)...])
        guard let profile = inflate(compressed, limit: LittleCMS.maxProfileBytes) else {
            ColorLog.record("PNG iCCP profile does not inflate within \(LittleCMS.maxProfileBytes) bytes: ignored")
            return nil
        }
        return profile
    }

    /// Inflates a zlib stream into at most `limit` bytes; `nil` on an error, a truncated stream or more output.
    static func inflate(_ input: UnsafeRawBufferPointer, limit: Int) -> Data? {
        guard let base = input.baseAddress, !input.isEmpty else { return nil }
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let status = CWebImageZlib.inflate(&stream, Z_NO_FLUSH)
                return (status, out.count - Int(stream.avail_out))
            }
            output.append(contentsOf: chunk[0..<produced])
            if output.count > limit { return nil }
            if status == Z_STREAM_END { return output }
            guard status == Z_OK, produced > 0 || stream.avail_in > 0 else { return nil }
        }
    }
}
