import ImageCodec

/// The coded size of every HEVC sequence parameter set (SPS) a HEIF file holds, for
/// `HEIFImageItems.codedSizes`.
///
/// libde265 (1.0.11) allocates each picture at the size its SPS declares, up to 65535 × 65535, and libheif
/// 1.15 never compares it with the item's `ispe`: a 3 KB file whose `ispe` says 64 × 100 decodes to
/// 8192 × 8192 (half a gigabyte) or 32768 × 32768 (gigabytes, before the decoded size can be checked). libheif
/// gives libde265 the NAL units of the item's `hvcC` property, then those of the item's data (each after a
/// 4-byte length), so the SPS units of both are read here: every `hvcC` box of every `ipco`, and the data of
/// every `hvc1` item, whatever the associations.
extension HEIFImageItems {
    /// An item's data, its extents one after the other, read in place.
    struct ItemBytes {
        /// The extents' ranges in the file, in order, cut at its end.
        let ranges: [Range<Int>]
        let count: Int

        init(_ reader: BoxReader, extents: [(offset: UInt64, length: UInt64)], constructionMethod: Int, idat: Range<Int>?) {
            var ranges: [Range<Int>] = []
            let size = reader.bytes.count
            let origin: Int? = switch constructionMethod {
            case 0: 0
            case 1: idat?.lowerBound
            default: nil
            }
            if let origin {
                for extent in extents where extent.offset < UInt64(size) && extent.length > 0 {
                    let start = origin + Int(extent.offset)
                    let end = min(start + Int(min(extent.length, UInt64(size))), size)
                    if start < end { ranges.append(start..<end) }
                }
            }
            self.ranges = ranges
            count = ranges.reduce(0) { $0 + $1.count }
        }

        /// Up to `count` bytes from `index` on (at most 32 extents: a linear walk to the first).
        func bytes(_ reader: BoxReader, at index: Int, count: Int) -> [UInt8] {
            var result: [UInt8] = []
            var skip = index
            for range in ranges where result.count < count {
                if skip >= range.count { skip -= range.count; continue }
                let start = range.lowerBound + skip
                result += reader.bytes[start..<min(range.upperBound, start + count - result.count)]
                skip = 0
            }
            return result
        }
    }

    /// The most bytes of an SPS read: its size comes after at most about 90 bytes (seven sub-layers).
    static let parameterSetPrefix = 256

    /// The SPS sizes in an `hvcC` box's NAL arrays (read as libheif reads them: every unit of every array).
    static func codedSizes(inHVCC content: Range<Int>, _ reader: BoxReader) -> [(width: Int, height: Int)] {
        guard let arrayCount = reader.uint8(at: content.lowerBound + 22) else { return [] }
        var sizes: [(Int, Int)] = []
        var offset = content.lowerBound + 23
        for _ in 0..<arrayCount {
            guard let unitCount = reader.uint16(at: offset + 1), offset + 3 <= content.upperBound else { break }
            offset += 3
            for _ in 0..<unitCount {
                guard let length = reader.uint16(at: offset), offset + 2 <= content.upperBound else { return sizes }
                let start = offset + 2, end = min(start + Int(length), content.upperBound)
                if start < end, let size = codedSize(ofNALUnit: Array(reader.bytes[start..<min(end, start + parameterSetPrefix)])) {
                    sizes.append(size)
                }
                offset = start + Int(length)
            }
        }
        return sizes
    }

    /// The SPS sizes in an `hvc1` item's data: NAL units each after a 4-byte length, as libheif hands them
    /// to libde265. Each unit costs one step of `budget`, each byte of an SPS read one more; nil when it
    /// runs out.
    static func codedSizes(inNALUnits item: ItemBytes, _ reader: BoxReader, budget: inout Int) -> [(width: Int, height: Int)]? {
        var sizes: [(Int, Int)] = []
        var index = 0
        while index + 4 <= item.count {
            let header = item.bytes(reader, at: index, count: 6)
            let length = header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            index += 4
            // Only parameter sets are read further.
            let isSequenceParameterSet = header.count == 6 && length >= 2 && header[4] >> 1 & 0x3F == 33
            budget -= isSequenceParameterSet ? 1 + min(length, parameterSetPrefix) : 1
            guard budget >= 0 else { return nil }
            if isSequenceParameterSet, let size = codedSize(ofNALUnit: item.bytes(reader, at: index, count: min(length, parameterSetPrefix))) {
                sizes.append(size)
            }
            index += length
        }
        return sizes
    }

    /// A NAL unit's payload after its 2-byte header, emulation prevention bytes (`00 00 03`) removed.
    static func rawPayload(of unit: [UInt8]) -> [UInt8] {
        var payload: [UInt8] = []
        var zeros = 0
        for byte in unit.dropFirst(2) {
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            payload.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return payload
    }

    /// `pic_width_in_luma_samples` × `pic_height_in_luma_samples` of an SPS NAL unit (type 33), read as
    /// libde265 reads them (emulation prevention bytes removed, `profile_tier_level` skipped); nil for other
    /// units and for sizes libde265 refuses to read.
    static func codedSize(ofNALUnit unit: [UInt8]) -> (width: Int, height: Int)? {
        guard unit.count >= 2, unit[0] >> 1 & 0x3F == 33 else { return nil }
        let payload = rawPayload(of: unit)
        var bit = 0
        func bits(_ count: Int) -> Int {
            var value = 0
            for _ in 0..<count {
                let byte = bit >> 3 < payload.count ? payload[bit >> 3] : 0  // past the end: zeros, as libde265
                value = value << 1 | Int(byte >> (7 - UInt8(bit & 7)) & 1)
                bit += 1
            }
            return value
        }
        func unsignedExpGolomb() -> Int? {
            var leadingZeros = 0
            while bits(1) == 0 {
                leadingZeros += 1
                guard leadingZeros <= 20 else { return nil }  // libde265's MAX_UVLC_LEADING_ZEROS
            }
            return (1 << leadingZeros) - 1 + bits(leadingZeros)
        }
        _ = bits(4)  // sps_video_parameter_set_id
        let subLayers = bits(3) + 1
        guard subLayers <= 7 else { return nil }
        _ = bits(1)
        _ = bits(88 + 8)  // general profile and level
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers - 1 { present.append((bits(1) == 1, bits(1) == 1)) }
        if subLayers > 1 { _ = bits(2 * (9 - subLayers)) }
        for layer in present { _ = bits((layer.profile ? 88 : 0) + (layer.level ? 8 : 0)) }
        guard unsignedExpGolomb() != nil, let chromaFormat = unsignedExpGolomb() else { return nil }
        if chromaFormat == 3 { _ = bits(1) }
        guard let width = unsignedExpGolomb(), let height = unsignedExpGolomb() else { return nil }
        return (width, height)
    }
}
