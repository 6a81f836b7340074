import Foundation
import ImageCodec

/// Which items a decode of each HEIF item also decodes, read from the file's `iref` boxes without libheif,
/// so that files libheif 1.15 would follow without end are refused before libheif sees them.
///
/// libheif 1.15 decodes a derived item (`iden`, `grid`, `iovl`) by recursing into the items it references
/// (`dimg`), and a master image by recursing into its alpha image (the item whose `auxl` reference names
/// the master). It checks neither for loops nor for depth: a file whose references loop overflows the stack
/// and kills the process, and grids of grids multiply decodes exponentially in a few hundred bytes.
///
/// The check reads more than libheif does, never less: every `iref` of every top-level `meta` (libheif
/// reads the first `iref` of the last `meta`), every reference whatever the item types, boxes cut short by
/// the end of the data read as far as they go. Reference entries are read the way libheif reads them: one
/// after the other, each entry's own size ignored.
///
/// - Important: A value type; the check runs on the calling thread in time linear in the size of the data.
struct HEIFItemReferences {
    /// For each item, the items whose decode its decode starts, once per reference (a grid's repeated tile
    /// counts each time).
    private(set) var dependencies: [UInt32: [UInt32]] = [:]

    /// For each derived item, the items its `dimg` references name (a grid's tiles, an overlay's layers, an
    /// identity item's source).
    private(set) var sources: [UInt32: [UInt32]] = [:]

    /// The items some `auxl` reference names: the masters that may have an alpha image.
    private(set) var mastersOfAuxiliaryImages: Set<UInt32> = []

    /// Reads the references of `data`; bytes that are not a HEIF file give no references.
    init(_ data: Data) {
        data.withUnsafeBytes { bytes in
            let reader = BoxReader(bytes: bytes)
            for meta in reader.boxes(in: 0..<bytes.count) where meta.type == BoxReader.fourCC("meta") {
                // A full box: version and flags first.
                let children = min(meta.content.lowerBound + 4, meta.content.upperBound)..<meta.content.upperBound
                for iref in reader.boxes(in: children) where iref.type == BoxReader.fourCC("iref") {
                    readReferences(reader, iref.content)
                }
            }
        }
    }

    /// Throws `ImageCodecError.corruptData` when the references loop, when one decode would start a chain
    /// of more than `maximumDepth` nested decodes, or more than `maximumDecodes` decodes in all.
    /// - Returns: the most decodes the decode of one item starts (itself included; 1 without references).
    @discardableResult
    func check(maximumDepth: Int, maximumDecodes: Int) throws -> Int {
        var mostDecodes = 1
        // Iterative depth-first search (the graph comes from the data; recursion here would be the same
        // stack overflow), computing for each item the longest chain below it and the decodes it starts.
        enum State { case open, done(depth: Int, decodes: Int) }
        var states: [UInt32: State] = [:]
        for root in dependencies.keys where states[root] == nil {
            var stack: [(item: UInt32, next: Int)] = [(root, 0)]
            states[root] = .open
            while let (item, next) = stack.last {
                let children = dependencies[item] ?? []
                if next < children.count {
                    stack[stack.count - 1].next += 1
                    switch states[children[next]] {
                    case .open?: throw ImageCodecError.corruptData(format: .heif, message: "item references loop (item \(children[next]))")
                    case .done?: continue
                    case nil:
                        states[children[next]] = .open
                        stack.append((children[next], 0))
                    }
                    continue
                }
                var depth = 0, decodes = 1
                for child in children {
                    guard case .done(let childDepth, let childDecodes)? = states[child] else { continue }
                    depth = max(depth, childDepth + 1)
                    decodes = min(decodes + childDecodes, maximumDecodes + 1)  // saturates: no overflow
                }
                guard depth <= maximumDepth else {
                    throw ImageCodecError.corruptData(format: .heif, message: "item references nest deeper than \(maximumDepth) (item \(item))")
                }
                guard decodes <= maximumDecodes else {
                    throw ImageCodecError.corruptData(format: .heif, message: "item references start more than \(maximumDecodes) decodes (item \(item))")
                }
                states[item] = .done(depth: depth, decodes: decodes)
                mostDecodes = max(mostDecodes, decodes)
                stack.removeLast()
            }
        }
        return mostDecodes
    }

    /// Reads the entries of one `iref` box: version 0 has 16-bit item ids, later versions 32-bit ones.
    private mutating func readReferences(_ reader: BoxReader, _ content: Range<Int>) {
        guard let version = reader.uint8(at: content.lowerBound) else { return }
        let idSize = version == 0 ? 2 : 4
        var offset = content.lowerBound + 4
        while offset < content.upperBound {
            // The entry's header: size (ignored, as libheif does), type, a 64-bit size, a uuid.
            guard offset + 8 <= content.upperBound, let size = reader.uint32(at: offset),
                  let type = reader.uint32(at: offset + 4) else { return }
            offset += 8
            if size == 1 { offset += 8 }
            if type == BoxReader.fourCC("uuid") { offset += 16 }
            guard let from = reader.id(at: offset, size: idSize, end: content.upperBound),
                  let count = reader.uint16(at: offset + idSize), offset + idSize + 2 <= content.upperBound else { return }
            offset += idSize + 2
            for _ in 0..<count {
                guard let to = reader.id(at: offset, size: idSize, end: content.upperBound) else { return }
                offset += idSize
                if type == BoxReader.fourCC("dimg") {
                    dependencies[from, default: []].append(to)
                    sources[from, default: []].append(to)
                }
                if type == BoxReader.fourCC("auxl") {
                    dependencies[to, default: []].append(from)
                    mastersOfAuxiliaryImages.insert(to)
                }
            }
        }
    }
}

/// Reads ISO base media file format boxes (ISO/IEC 14496-12) from bytes, bounds-checked.
struct BoxReader {
    let bytes: UnsafeRawBufferPointer

    /// The boxes one after another in `range`: type and content. A box running past the range is cut at its
    /// end; a size smaller than its header ends the list.
    func boxes(in range: Range<Int>) -> [(type: UInt32, content: Range<Int>)] {
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

    func uint8(at offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[offset] : nil }

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    func uint32(at offset: Int) -> UInt32? {
        guard let high = uint16(at: offset), let low = uint16(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint64(at offset: Int) -> UInt64? {
        guard let high = uint32(at: offset), let low = uint32(at: offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// An item id of `size` bytes (2 or 4) that ends by `end`.
    func id(at offset: Int, size: Int, end: Int) -> UInt32? {
        guard offset + size <= end else { return nil }
        return size == 2 ? uint16(at: offset).map(UInt32.init) : uint32(at: offset)
    }

    static func fourCC(_ code: StaticString) -> UInt32 {
        code.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
