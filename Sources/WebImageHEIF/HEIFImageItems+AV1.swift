import ImageCodec

/// The largest frame size of every AV1 sequence header a HEIF file holds, for `HEIFImageItems.codedSizes`.
///
/// Debian's libheif 1.15 also decodes `av01` items (through dav1d or libaom), whatever the file's brands,
/// and sets no frame size limit: dav1d allocates frames up to the `max_frame_width` × `max_frame_height` of
/// the sequence header, up to 65536 × 65536 (a 200-byte file whose `ispe` says 1 × 1 made it allocate
/// 400 MB at 8192 × 8192). libheif gives the decoder the OBUs of the item's `av1C` property, then the item's
/// data, so the sequence headers of both are read here: every `av1C` box of every `ipco`, and the data of
/// every `av01` item, whatever the associations.
extension HEIFImageItems {
    /// The sequence header sizes among the OBUs of an `av1C` box (after its 4-byte configuration).
    static func codedSizes(inAV1C content: Range<Int>, _ reader: BoxReader, budget: inout Int) -> [(width: Int, height: Int)]? {
        guard content.count > 4 else { return [] }
        let obus = ItemBytes(reader, extents: [(UInt64(content.lowerBound + 4), UInt64(content.count - 4))], constructionMethod: 0, idat: nil)
        return codedSizes(inOBUs: obus, reader, budget: &budget)
    }

    /// The sequence header sizes in a stream of OBUs (low-overhead format: an OBU without a size field
    /// runs to the end). Each OBU costs one step of `budget`, each byte of a sequence header read one more;
    /// nil when it runs out.
    static func codedSizes(inOBUs stream: ItemBytes, _ reader: BoxReader, budget: inout Int) -> [(width: Int, height: Int)]? {
        var sizes: [(Int, Int)] = []
        var index = 0
        while index < stream.count {
            let header = stream.bytes(reader, at: index, count: 10)
            guard let first = header.first else { break }
            let type = first >> 3 & 0xF, hasExtension = first & 4 != 0, hasSize = first & 2 != 0
            var payloadStart = index + (hasExtension ? 2 : 1)
            var length = stream.count - payloadStart
            if hasSize {
                // leb128, at most 8 bytes.
                var value = 0
                var byteIndex = hasExtension ? 2 : 1
                for shift in stride(from: 0, to: 56, by: 7) {
                    guard byteIndex < header.count else { return sizes }
                    let byte = header[byteIndex]
                    byteIndex += 1
                    value |= Int(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { break }
                }
                payloadStart = index + byteIndex
                length = value
            }
            budget -= type == 1 ? 1 + min(length, parameterSetPrefix) : 1
            guard budget >= 0 else { return nil }
            if type == 1, let size = codedSize(ofSequenceHeader: stream.bytes(reader, at: payloadStart, count: min(length, parameterSetPrefix))) {
                sizes.append(size)
            }
            guard length >= 0, payloadStart + length > index else { break }
            index = payloadStart + length
        }
        return sizes
    }

    /// `max_frame_width_minus_1 + 1` × `max_frame_height_minus_1 + 1` of a sequence header OBU's payload
    /// (AV1 specification 5.5.1); nil when it is cut short.
    static func codedSize(ofSequenceHeader payload: [UInt8]) -> (width: Int, height: Int)? {
        var bit = 0
        func bits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard bit >> 3 < payload.count else { return nil }
                value = value << 1 | Int(payload[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
                bit += 1
            }
            return value
        }
        guard bits(3) != nil, bits(1) != nil, let reduced = bits(1) else { return nil }
        if reduced == 1 {
            guard bits(5) != nil else { return nil }  // seq_level_idx
        } else {
            guard let timingInfo = bits(1) else { return nil }
            var decoderModelInfo = 0, bufferDelayLength = 0
            if timingInfo == 1 {
                guard bits(64) != nil, let equalPictureInterval = bits(1) else { return nil }
                if equalPictureInterval == 1 {  // uvlc
                    var leadingZeros = 0
                    while true {
                        guard let done = bits(1) else { return nil }
                        if done == 1 { break }
                        leadingZeros += 1
                    }
                    guard leadingZeros >= 32 || bits(leadingZeros) != nil else { return nil }
                }
                guard let present = bits(1) else { return nil }
                decoderModelInfo = present
                if present == 1 {
                    guard let length = bits(5), bits(32 + 5 + 5) != nil else { return nil }
                    bufferDelayLength = length + 1
                }
            }
            guard let initialDisplayDelay = bits(1), let operatingPoints = bits(5) else { return nil }
            for _ in 0...operatingPoints {
                guard bits(12) != nil, let level = bits(5) else { return nil }
                if level > 7 { guard bits(1) != nil else { return nil } }
                if decoderModelInfo == 1 {
                    guard let present = bits(1) else { return nil }
                    if present == 1 { guard bits(2 * bufferDelayLength + 1) != nil else { return nil } }
                }
                if initialDisplayDelay == 1 {
                    guard let present = bits(1) else { return nil }
                    if present == 1 { guard bits(4) != nil else { return nil } }
                }
            }
        }
        guard let widthBits = bits(4), let heightBits = bits(4),
              let width = bits(widthBits + 1), let height = bits(heightBits + 1) else { return nil }
        return (width + 1, height + 1)
    }
}
