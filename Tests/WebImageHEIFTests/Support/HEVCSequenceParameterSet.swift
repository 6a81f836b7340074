import Foundation
import TestSupport
@testable import WebImageHEIF

/// Rewrites the picture size in the HEVC sequence parameter sets (SPS) of an `hvcC` box, for files whose
/// coded size differs from their `ispe`. Handles what simple encoders write: one sub-layer.
enum HEVCSequenceParameterSet {
    /// `hvcC` (a whole box) with `pic_width_in_luma_samples` / `pic_height_in_luma_samples` of each SPS set
    /// to `width` × `height`; nil when the box holds an SPS this cannot rewrite.
    static func hvcC(_ box: Data, settingWidth width: Int, height: Int) -> Data? {
        let bytes = [UInt8](box)
        guard bytes.count > 31 else { return nil }
        var body = Array(bytes[8..<31])  // the configuration, then the number of arrays
        var offset = 31
        for _ in 0..<Int(bytes[30]) {
            guard offset + 3 <= bytes.count else { return nil }
            let type = bytes[offset] & 0x3F, count = Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            body += bytes[offset..<offset + 3]
            offset += 3
            for _ in 0..<count {
                guard offset + 2 <= bytes.count else { return nil }
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                guard offset + 2 + length <= bytes.count else { return nil }
                var unit = Array(bytes[offset + 2..<offset + 2 + length])
                offset += 2 + length
                if type == 33 {
                    guard let rewritten = rewriting(unit, width: width, height: height) else { return nil }
                    unit = rewritten
                }
                body += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit
            }
        }
        return HEIFFileBuilder.box("hvcC", Data(body))
    }

    /// The NAL units of `type` (33: SPS) in an `hvcC` box (a whole box).
    static func units(ofType type: UInt8, in box: Data) -> [Data] {
        let bytes = [UInt8](box)
        var units: [Data] = []
        var offset = 31
        for _ in 0..<(bytes.count > 30 ? Int(bytes[30]) : 0) {
            guard offset + 3 <= bytes.count else { break }
            let arrayType = bytes[offset] & 0x3F, count = Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            offset += 3
            for _ in 0..<count {
                guard offset + 2 <= bytes.count else { return units }
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                guard offset + 2 + length <= bytes.count else { return units }
                if arrayType == type { units.append(Data(bytes[offset + 2..<offset + 2 + length])) }
                offset += 2 + length
            }
        }
        return units
    }

    /// One SPS NAL unit with its picture size replaced.
    private static func rewriting(_ unit: [UInt8], width: Int, height: Int) -> [UInt8]? {
        // Emulation prevention bytes out (as the decoder's check reads them), bits, fields replaced, bytes and
        // escapes back.
        let payload = HEIFImageItems.rawPayload(of: unit)
        var bits = payload.flatMap { byte in (0..<8).map { byte >> (7 - $0) & 1 } }
        var position = 4 + 3 + 1 + 96
        guard bits.count > 8, bits[4] == 0, bits[5] == 0, bits[6] == 0 else { return nil }  // one sub-layer
        func skipExpGolomb() -> Bool {
            var leadingZeros = 0
            while position < bits.count, bits[position] == 0 { leadingZeros += 1; position += 1 }
            position += leadingZeros + 1
            return position <= bits.count
        }
        func expGolomb(_ value: Int) -> [UInt8] {
            let code = value + 1, length = Int.bitWidth - code.leadingZeroBitCount
            return Array(repeating: 0, count: length - 1) + (0..<length).map { UInt8(code >> (length - 1 - $0) & 1) }
        }
        guard skipExpGolomb() else { return nil }  // sps_seq_parameter_set_id
        let chromaStart = position
        guard skipExpGolomb() else { return nil }
        let chromaFormat = bits[chromaStart..<position].count  // 1 bit ("1") means 0, 3 bits ("01x") mean 1–2
        if chromaFormat >= 5 { position += 1 }  // 4:4:4 (or more) has separate_colour_plane_flag
        let sizeStart = position
        guard skipExpGolomb(), skipExpGolomb() else { return nil }
        bits.replaceSubrange(sizeStart..<position, with: expGolomb(width) + expGolomb(height))
        bits += Array(repeating: 0, count: (8 - bits.count % 8) % 8)
        let packed = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<start + 8].reduce(0) { $0 << 1 | $1 } }
        var escaped: [UInt8] = []
        var zeros = 0
        for byte in packed {
            if zeros >= 2 && byte <= 3 { escaped.append(3); zeros = 0 }
            escaped.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return Array(unit.prefix(2)) + escaped
    }
}
