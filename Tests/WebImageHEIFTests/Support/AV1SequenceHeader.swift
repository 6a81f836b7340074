import Foundation

/// Rewrites the largest frame size in the AV1 sequence headers of an OBU stream, for files whose coded
/// size differs from their `ispe`. Handles what libavif writes for stills: reduced sequence headers, OBUs
/// with size fields.
enum AV1SequenceHeader {
    /// `stream` with `max_frame_width_minus_1` / `max_frame_height_minus_1` of each sequence header set
    /// for `width` × `height` (16-bit fields); nil when it holds OBUs this cannot rewrite.
    static func stream(_ stream: Data, settingWidth width: Int, height: Int) -> Data? {
        let bytes = [UInt8](stream)
        var result = Data()
        var index = 0
        while index < bytes.count {
            let header = bytes[index]
            guard header & 2 != 0, header & 4 == 0 else { return nil }  // a size field, no extension
            var length = 0, shift = 0, offset = index + 1
            while true {
                guard offset < bytes.count else { return nil }
                length |= Int(bytes[offset] & 0x7F) << shift
                shift += 7
                offset += 1
                if bytes[offset - 1] & 0x80 == 0 { break }
            }
            guard offset + length <= bytes.count else { return nil }
            var payload = Array(bytes[offset..<offset + length])
            if header >> 3 & 0xF == 1 {
                guard let rewritten = rewriting(payload, width: width, height: height) else { return nil }
                payload = rewritten
            }
            result += [header] + leb128(payload.count) + payload
            index = offset + length
        }
        return result
    }

    private static func leb128(_ value: Int) -> [UInt8] {
        var value = value, out: [UInt8] = []
        repeat {
            let byte = UInt8(value & 0x7F)
            value >>= 7
            out.append(value > 0 ? byte | 0x80 : byte)
        } while value > 0
        return out
    }

    private static func rewriting(_ payload: [UInt8], width: Int, height: Int) -> [UInt8]? {
        var bits = payload.flatMap { byte in (0..<8).map { byte >> (7 - $0) & 1 } }
        guard bits.count > 18, bits[4] == 1 else { return nil }  // reduced_still_picture_header
        func value(_ range: Range<Int>) -> Int { bits[range].reduce(0) { $0 << 1 | Int($1) } }
        func field(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(value >> (count - 1 - $0) & 1) } }
        let start = 3 + 1 + 1 + 5
        let widthBits = value(start..<start + 4) + 1, heightBits = value(start + 4..<start + 8) + 1
        let end = start + 8 + widthBits + heightBits
        guard end <= bits.count else { return nil }
        bits.replaceSubrange(start..<end, with: field(15, 4) + field(15, 4) + field(width - 1, 16) + field(height - 1, 16))
        bits += Array(repeating: 0, count: (8 - bits.count % 8) % 8)
        return stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<start + 8].reduce(0) { $0 << 1 | $1 } }
    }
}
