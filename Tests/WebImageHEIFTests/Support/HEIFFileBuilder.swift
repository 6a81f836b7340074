import Foundation

/// Builds small HEIF files box by box, for tests that need a structure no encoder writes: item references
/// that loop, chains of derived images, grids of grids.
///
/// Every item gets an `ispe` of `width × height` and eight bytes in an `mdat`; a `grid` item's bytes describe
/// one row of as many tiles as it has `dimg` references. Coded items (`hvc1`) have no `hvcC` and no real
/// data, so a file libheif accepts fails only when it reaches a coded image.
struct HEIFFileBuilder {
    /// One item: its id and four-character type (`iden`, `grid`, `hvc1`, …).
    struct Item { var id: UInt16; var type: String }
    /// One reference: `type` (`dimg`, `auxl`, `thmb`) from one item to others, in order.
    struct Reference { var type: String; var from: UInt16; var to: [UInt16] }

    var items: [Item]
    var references: [Reference]
    var primary: UInt16 = 1
    var width: UInt32 = 64
    var height: UInt32 = 64

    /// The file's bytes: `ftyp`, `meta`, `mdat`.
    func build() -> Data {
        let head = Self.box("ftyp", Data("heic".utf8) + Self.be32(0) + Data("mif1heic".utf8))
        // The item data's offsets depend on the size of `meta`, which does not depend on their values.
        let metaSize = meta(dataStart: 0).count
        let dataStart = UInt32(head.count + metaSize + 8)
        return head + meta(dataStart: dataStart) + Self.box("mdat", items.map(itemData).reduce(Data(), +))
    }

    /// Eight bytes per item: a grid's descriptor (version 0, flags 0, rows - 1, columns - 1, 16-bit output
    /// width and height), zeros for every other item.
    private func itemData(_ item: Item) -> Data {
        guard item.type == "grid" else { return Data(count: 8) }
        let tiles = references.filter { $0.type == "dimg" && $0.from == item.id }.reduce(0) { $0 + $1.to.count }
        let columns = UInt8(clamping: max(tiles, 1))
        return Data([0, 0, 0, columns - 1]) + Self.be16(UInt16(clamping: Int(width) * Int(columns))) + Self.be16(UInt16(clamping: Int(height)))
    }

    private func meta(dataStart: UInt32) -> Data {
        var meta = Self.box("hdlr", fullBox: 0, Self.be32(0) + Data("pict".utf8) + Data(count: 12) + Data([0]))
        meta += Self.box("pitm", fullBox: 0, Self.be16(primary))
        var iinf = Self.be16(UInt16(items.count))
        for item in items {
            iinf += Self.box("infe", fullBox: 2 << 24, Self.be16(item.id) + Self.be16(0) + Data(item.type.utf8) + Data([0]))
        }
        meta += Self.box("iinf", fullBox: 0, iinf)
        if !references.isEmpty {
            var iref = Data()
            for reference in references {
                var body = Self.be16(reference.from) + Self.be16(UInt16(reference.to.count))
                for target in reference.to { body += Self.be16(target) }
                iref += Self.box(reference.type, body)
            }
            meta += Self.box("iref", fullBox: 0, iref)
        }
        let ipco = Self.box("ipco", Self.box("ispe", fullBox: 0, Self.be32(width) + Self.be32(height)))
        var ipma = Self.be32(UInt32(items.count))
        for item in items { ipma += Self.be16(item.id) + Data([1, 0x81]) }  // one essential association: property 1
        meta += Self.box("iprp", ipco + Self.box("ipma", fullBox: 0, ipma))
        // iloc version 0: 4-byte offsets and lengths, no base offset; one 8-byte extent per item.
        var iloc = Data([0x44, 0x00]) + Self.be16(UInt16(items.count))
        for (index, item) in items.enumerated() {
            iloc += Self.be16(item.id) + Self.be16(0) + Self.be16(1) + Self.be32(dataStart + UInt32(8 * index)) + Self.be32(8)
        }
        meta += Self.box("iloc", fullBox: 0, iloc)
        return Self.box("meta", fullBox: 0, meta)
    }

    /// A box: 32-bit size, type, then (for a full box) version and flags, then `body`.
    static func box(_ type: String, fullBox versionAndFlags: UInt32? = nil, _ body: Data) -> Data {
        let header = versionAndFlags.map { be32($0) } ?? Data()
        return be32(UInt32(8 + header.count + body.count)) + Data(type.utf8) + header + body
    }

    static func be16(_ value: UInt16) -> Data { Data([UInt8(value >> 8), UInt8(value & 0xFF)]) }
    static func be32(_ value: UInt32) -> Data { Data((0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) }) }
}
