import Foundation

/// Reads ISO base media file format boxes (ISO/IEC 14496-12) from bytes, bounds-checked: the boxes of
/// HEIF and AVIF files that their modules (WebImageHEIF, WebImageAVIF) check before the C libraries read a
/// file. `package`: shared by the codec modules, not public API.
///
/// - Important: A value type over borrowed bytes: use it inside the `withUnsafeBytes` that gives them.
package struct BoxReader {
    /// The bytes read.
    package let bytes: UnsafeRawBufferPointer

    /// A reader of `bytes`.
    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The boxes one after another in `range`: type and content. A box running past the range is cut at its
    /// end; a size smaller than its header ends the list.
    package func boxes(in range: Range<Int>) -> [(type: UInt32, content: Range<Int>)] {
        var result: [(UInt32, Range<Int>)] = []
        var offset = range.lowerBound
        while let size32 = uint32(at: offset), let type = uint32(at: offset + 4), offset + 8 <= range.upperBound {
            var header = 8
            var size = UInt64(size32)
            if size32 == 1 {
                guard let large = uint64(at: offset + 8) else { break }
                size = large
                header = 16
            } else if size32 == 0 {
                size = UInt64(range.upperBound - offset)
            }
            if type == Self.fourCC("uuid") { header += 16 }
            guard size >= UInt64(header), offset + header <= range.upperBound else { break }
            let end = size > UInt64(range.upperBound - offset) ? range.upperBound : offset + Int(size)
            result.append((type, offset + header..<end))
            offset = end
        }
        return result
    }

    /// Whether the data ends inside a top-level box: the last box's size (a size of 0 runs to the end, 1 takes
    /// a 64-bit size) or its header runs past the end of the bytes. Walks box headers only. libavif 0.11 and
    /// libheif 1.15 report such a file as malformed (a BMFF parse failure, "No 'meta' box"); for the decoders
    /// it is a file cut short (`ImageCodecError.truncated`).
    package var endsInsideATopLevelBox: Bool {
        var offset = 0
        while offset < bytes.count {
            guard let size32 = uint32(at: offset), bytes.count - offset >= 8 else { return true }
            var size = UInt64(size32)
            if size32 == 0 { return false }
            if size32 == 1 {
                guard let large = uint64(at: offset + 8) else { return true }
                size = large
            }
            guard size >= 8 else { return false }  // malformed, not cut
            guard size <= UInt64(bytes.count - offset) else { return true }
            offset += Int(size)
        }
        return false
    }

    /// The byte at `offset`, or nil outside the bytes (as are the readers below, big-endian).
    package func uint8(at offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[offset] : nil }

    package func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    package func uint32(at offset: Int) -> UInt32? {
        guard let high = uint16(at: offset), let low = uint16(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    package func uint64(at offset: Int) -> UInt64? {
        guard let high = uint32(at: offset), let low = uint32(at: offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// An item id of `size` bytes (2 or 4) that ends by `end`.
    package func id(at offset: Int, size: Int, end: Int) -> UInt32? {
        guard offset + size <= end else { return nil }
        return size == 2 ? uint16(at: offset).map(UInt32.init) : uint32(at: offset)
    }

    /// The four-character code `code` as a big-endian integer (`fourCC("meta")`).
    package static func fourCC(_ code: StaticString) -> UInt32 {
        code.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    /// The child boxes of every top-level `meta` box (a full box: its version and flags skipped).
    package func metaChildren() -> [[(type: UInt32, content: Range<Int>)]] {
        boxes(in: 0..<bytes.count).filter { $0.type == Self.fourCC("meta") }.map {
            boxes(in: min($0.content.lowerBound + 4, $0.content.upperBound)..<$0.content.upperBound)
        }
    }

    /// The entries of one `iref` box (`content`: after its header): type, from, to. Version 0 has 16-bit
    /// item ids, later versions 32-bit ones. Entries are read the way libheif 1.15 and libavif 0.11 read
    /// them: one after the other, each entry's own size ignored; an entry cut short by the end ends the list
    /// (its complete ids kept).
    package func itemReferences(in content: Range<Int>) -> [(type: UInt32, from: UInt32, to: [UInt32])] {
        guard let version = uint8(at: content.lowerBound) else { return [] }
        let idSize = version == 0 ? 2 : 4
        var references: [(UInt32, UInt32, [UInt32])] = []
        var offset = content.lowerBound + 4
        while offset < content.upperBound {
            // The entry's header: size (ignored), type, a 64-bit size, a uuid.
            guard offset + 8 <= content.upperBound, let size = uint32(at: offset), let type = uint32(at: offset + 4) else { break }
            offset += 8
            if size == 1 { offset += 8 }
            if type == Self.fourCC("uuid") { offset += 16 }
            guard let from = id(at: offset, size: idSize, end: content.upperBound),
                  let count = uint16(at: offset + idSize), offset + idSize + 2 <= content.upperBound else { break }
            offset += idSize + 2
            var to: [UInt32] = []
            for _ in 0..<count {
                guard let target = id(at: offset, size: idSize, end: content.upperBound) else { break }
                offset += idSize
                to.append(target)
            }
            references.append((type, from, to))
            if to.count < Int(count) { break }
        }
        return references
    }
}
