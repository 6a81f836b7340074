import Foundation

/// Builds small HEIF (and AVIF: `brands`) files box by box, for tests that need a structure no encoder
/// writes: item references that loop, chains of derived images, grids of grids.
///
/// Every item gets an `ispe` of `width × height` and eight bytes in an `mdat`; a `grid` item's bytes describe
/// one row of as many tiles as it has `dimg` references. Coded items (`hvc1`) have no `hvcC` and no real
/// data, so a file libheif accepts fails only when it reaches a coded image.
public struct HEIFFileBuilder {
    /// One item: its id and four-character type (`iden`, `grid`, `hvc1`, …); optionally its own data (instead
    /// of the eight bytes described below), its own property boxes (instead of the shared `ispe`), hidden.
    public struct Item {
        public var id: UInt16
        public var type: String
        public var data: Data?
        public var properties: [Data]?
        public var isHidden: Bool
        /// For a `mime` item: its content encoding (`deflate`), after content type `application/rdf+xml`.
        public var contentEncoding: String?
        /// How many extents of `iloc` name the item's data (each the whole data, so readers read it that often).
        public var extentCount: UInt16 = 1

        /// An item; see the type.
        public init(id: UInt16, type: String, data: Data? = nil, properties: [Data]? = nil, isHidden: Bool = false,
                    contentEncoding: String? = nil) {
            self.id = id
            self.type = type
            self.data = data
            self.properties = properties
            self.isHidden = isHidden
            self.contentEncoding = contentEncoding
        }
    }
    /// One reference: `type` (`dimg`, `auxl`, `thmb`) from one item to others, in order.
    public struct Reference {
        public var type: String, from: UInt16, to: [UInt16]

        /// A reference; see the type.
        public init(type: String, from: UInt16, to: [UInt16]) {
            self.type = type
            self.from = from
            self.to = to
        }
    }

    /// The items, in `iinf`, `iloc` and `mdat` order.
    public var items: [Item]
    /// The references (one `iref` entry each).
    public var references: [Reference]
    /// The primary item (`pitm`).
    public var primary: UInt16 = 1
    /// The shared `ispe` property's size.
    public var width: UInt32 = 64, height: UInt32 = 64
    /// The `ftyp` box's major brand, then its compatible brands.
    public var brands = ["heic", "mif1", "heic"]

    /// A file of `items` and `references` (no `iref` box when there are none).
    public init(items: [Item], references: [Reference]) {
        self.items = items
        self.references = references
    }

    /// The file's bytes: `ftyp`, `meta`, `mdat`.
    public func build() -> Data {
        let head = Self.box("ftyp", Data(brands[0].utf8) + Self.be32(0) + Data(brands.dropFirst().joined().utf8))
        // The item data's offsets depend on the size of `meta`, which does not depend on their values.
        let metaSize = meta(dataStart: 0).count
        let dataStart = UInt32(head.count + metaSize + 8)
        return head + meta(dataStart: dataStart) + Self.box("mdat", items.reduce(into: Data()) { $0 += itemData($1) })
    }

    /// Eight bytes per item: a grid's descriptor (version 0, flags 0, rows - 1, columns - 1, 16-bit output
    /// width and height), zeros for every other item.
    private func itemData(_ item: Item) -> Data {
        if let data = item.data { return data }
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
            var infe = Self.be16(item.id) + Self.be16(0) + Data(item.type.utf8) + Data([0])
            if let encoding = item.contentEncoding { infe += Data("application/rdf+xml".utf8) + Data([0]) + Data(encoding.utf8) + Data([0]) }
            iinf += Self.box("infe", fullBox: 2 << 24 | (item.isHidden ? 1 : 0), infe)
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
        // Property 1 is the shared `ispe`; items with their own properties get theirs (each box once).
        var properties = [Self.box("ispe", fullBox: 0, Self.be32(width) + Self.be32(height))]
        var ipma = Self.be32(UInt32(items.count))
        for item in items {
            let indices = (item.properties ?? [properties[0]]).map { property in
                if let index = properties.firstIndex(of: property) { return UInt8(index + 1) }
                properties.append(property)
                return UInt8(properties.count)
            }
            ipma += Self.be16(item.id) + Data([UInt8(indices.count)]) + Data(indices.map { 0x80 | $0 })  // essential
        }
        let ipco = Self.box("ipco", properties.reduce(Data(), +))
        meta += Self.box("iprp", ipco + Self.box("ipma", fullBox: 0, ipma))
        // iloc version 0: 4-byte offsets and lengths, no base offset; one 8-byte extent per item.
        var iloc = Data([0x44, 0x00]) + Self.be16(UInt16(items.count))
        var offset = dataStart
        for item in items {
            let length = UInt32(itemData(item).count)
            iloc += Self.be16(item.id) + Self.be16(0) + Self.be16(item.extentCount)
            for _ in 0..<item.extentCount { iloc += Self.be32(offset) + Self.be32(length) }
            offset += length
        }
        meta += Self.box("iloc", fullBox: 0, iloc)
        return Self.box("meta", fullBox: 0, meta)
    }

    /// An `ispe` property: the image's size.
    public static func ispe(width: UInt32, height: UInt32) -> Data { box("ispe", fullBox: 0, be32(width) + be32(height)) }

    /// A `pixi` property: bits per channel.
    public static func pixi(_ bits: [UInt8]) -> Data { box("pixi", fullBox: 0, Data([UInt8(bits.count)] + bits)) }

    /// An `auxC` property marking an alpha image.
    public static let alphaAuxC = box("auxC", fullBox: 0, Data("urn:mpeg:hevc:2015:auxid:1".utf8) + Data([0]))

    /// An overlay's (`iovl`) data, version 0 with 16-bit fields: background RGBA (16 bits each), canvas
    /// size, one offset per layer.
    public static func overlay(width: UInt16, height: UInt16, background: [UInt16] = [0, 0, 0, 0xFFFF], offsets: [(Int16, Int16)] = []) -> Data {
        Data([0, 0]) + background.map(be16).reduce(Data(), +) + be16(width) + be16(height)
            + offsets.map { be16(UInt16(bitPattern: $0.0)) + be16(UInt16(bitPattern: $0.1)) }.reduce(Data(), +)
    }

    /// A grid's data, version 0 with 32-bit output size.
    public static func grid(rows: UInt8, columns: UInt8, width: UInt32, height: UInt32) -> Data {
        Data([0, 1, rows - 1, columns - 1]) + be32(width) + be32(height)
    }

    /// A zlib stream (RFC 1950/1951, fixed Huffman codes) of `1 + 258 × matches` zero bytes: one literal,
    /// then `matches` copies of 258 bytes at distance 1, 13 bits each (about 159:1).
    public static func zlibZeros(matches: Int) -> Data {
        var bytes: [UInt8] = [0x78, 0x01], bitCount = 0
        func put(_ value: Int, _ count: Int, huffman: Bool = false) {  // Huffman codes go most significant bit first
            for index in 0..<count {
                let bit = huffman ? value >> (count - 1 - index) & 1 : value >> index & 1
                if bitCount % 8 == 0 { bytes.append(0) }
                bytes[bytes.count - 1] |= UInt8(bit << (bitCount % 8))
                bitCount += 1
            }
        }
        put(1, 1)  // final block
        put(1, 2)  // fixed Huffman codes
        put(0x30, 8, huffman: true)  // literal 0
        for _ in 0..<matches {
            put(0xC5, 8, huffman: true)  // length 258 (code 285)
            put(0, 5, huffman: true)  // distance 1 (code 0)
        }
        put(0, 7, huffman: true)  // end of block
        let length = 1 + 258 * matches
        let adler = UInt32(length % 65521) << 16 | 1  // Adler-32 of zeros: a = 1, b = length
        return Data(bytes) + be32(adler)
    }

    /// A box: 32-bit size, type, then (for a full box) version and flags, then `body`.
    public static func box(_ type: String, fullBox versionAndFlags: UInt32? = nil, _ body: Data) -> Data {
        let header = versionAndFlags.map { be32($0) } ?? Data()
        return be32(UInt32(8 + header.count + body.count)) + Data(type.utf8) + header + body
    }

    public static func be16(_ value: UInt16) -> Data { Data([UInt8(value >> 8), UInt8(value & 0xFF)]) }
    public static func be32(_ value: UInt32) -> Data { Data((0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) }) }
}
