import Foundation

/// One coded item (`hvc1`, `av01`) taken out of a real HEIF or AVIF file: its property boxes (`hvcC`, `ispe`, …) and its
/// data, to put real HEVC images into files `HEIFFileBuilder` makes. Reads only what simple files hold:
/// the first `meta`, `iloc` versions 0–2 with data in the file (construction method 0).
public struct HEIFCodedItem {
    /// The item's property boxes, whole (header included), in association order.
    public var properties: [Data]
    /// The item's data, extents one after the other.
    public var data: Data

    /// Reads item `id` of `file`; nil when the file does not hold it in the way described above.
    public init?(_ file: Data, item id: UInt32) {
        let bytes = [UInt8](file)
        func int(_ offset: Int, _ size: Int) -> Int? {
            guard size > 0 else { return 0 }
            guard offset >= 0, offset + size <= bytes.count else { return nil }
            return bytes[offset..<offset + size].reduce(0) { $0 << 8 | Int($1) }
        }
        /// (type, box start, content start, end) of the boxes in `range`.
        func boxes(_ range: Range<Int>) -> [(type: String, start: Int, content: Int, end: Int)] {
            var result: [(String, Int, Int, Int)] = []
            var offset = range.lowerBound
            while let size = int(offset, 4), offset + 8 <= range.upperBound, size >= 8, offset + size <= range.upperBound {
                result.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset, offset + 8, offset + size))
                offset += size
            }
            return result
        }
        guard let meta = boxes(0..<bytes.count).first(where: { $0.type == "meta" }) else { return nil }
        let children = boxes(meta.content + 4..<meta.end)
        guard let iprp = children.first(where: { $0.type == "iprp" }), let iloc = children.first(where: { $0.type == "iloc" }),
              let ipco = boxes(iprp.content..<iprp.end).first(where: { $0.type == "ipco" }),
              let ipma = boxes(iprp.content..<iprp.end).first(where: { $0.type == "ipma" }) else { return nil }
        let propertyBoxes = boxes(ipco.content..<ipco.end).map { file.subdata(in: $0.start..<$0.end) }

        // ipma: per item, its 1-based property indices (7 or 15 bits, the top bit is "essential").
        guard let ipmaVersion = int(ipma.content, 1), let flags = int(ipma.content + 1, 3),
              var count = int(ipma.content + 4, 4) else { return nil }
        var offset = ipma.content + 8
        var indices: [Int]?
        while count > 0 {
            count -= 1
            let idSize = ipmaVersion < 1 ? 2 : 4
            guard let item = int(offset, idSize), let associations = int(offset + idSize, 1) else { return nil }
            offset += idSize + 1
            let indexSize = flags & 1 == 1 ? 2 : 1
            let mask = flags & 1 == 1 ? 0x7FFF : 0x7F
            let list = (0..<associations).compactMap { int(offset + $0 * indexSize, indexSize).map { $0 & mask } }
            offset += associations * indexSize
            if item == Int(id) { indices = list }
        }
        guard let indices, indices.allSatisfy({ $0 >= 1 && $0 <= propertyBoxes.count }) else { return nil }
        properties = indices.map { propertyBoxes[$0 - 1] }

        // iloc: sizes, then per item its extents.
        guard let version = int(iloc.content, 1), let sizes = int(iloc.content + 4, 2) else { return nil }
        let offsetSize = sizes >> 12 & 0xF, lengthSize = sizes >> 8 & 0xF, baseSize = sizes >> 4 & 0xF
        let indexSize = version >= 1 ? sizes & 0xF : 0
        offset = iloc.content + 6
        guard var items = int(offset, version < 2 ? 2 : 4) else { return nil }
        offset += version < 2 ? 2 : 4
        while items > 0 {
            items -= 1
            let idSize = version < 2 ? 2 : 4
            guard let item = int(offset, idSize) else { return nil }
            offset += idSize
            var method = 0
            if version >= 1 { method = (int(offset, 2) ?? 0) & 0xF; offset += 2 }
            offset += 2  // data reference index
            guard let base = int(offset, baseSize), let extents = int(offset + baseSize, 2) else { return nil }
            offset += baseSize + 2
            var data = Data()
            for _ in 0..<extents {
                offset += indexSize
                guard let start = int(offset, offsetSize), let length = int(offset + offsetSize, lengthSize),
                      base + start + length <= bytes.count else { return nil }
                offset += offsetSize + lengthSize
                data += file.subdata(in: base + start..<base + start + length)
            }
            if item == Int(id) {
                guard method == 0 else { return nil }
                self.data = data
                return
            }
        }
        return nil
    }
}
