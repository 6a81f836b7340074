import Foundation
import ImageCodec

/// The image items of a HEIF file as libheif 1.15 would decode them, read from the file's `iinf`, `iloc`,
/// `idat` and `ipco` boxes without libheif, so that its memory faults are refused before it decodes:
///
/// - A coded image (`hvc1`, `av01`) is decoded at the size its HEVC sequence parameter set or AV1 sequence
///   header declares, whatever its `ispe` says (see `HEIFImageItems+HEVC.swift`, `+AV1.swift`); those sizes
///   are checked against the `DecodeLimits` first (`check(limits:)`).
/// - A grid's or overlay's canvas comes from the item's own data (rows, columns, output size), not from its
///   `ispe`: libheif 1.15 allocates the canvas, and fills an overlay's, before any tile is decoded, bounded
///   only by its per-side limit (3 GB for an overlay of 32767 × 32767 from a 200-byte file). The declared
///   canvases are checked against the `DecodeLimits` first (`check(limits:)`).
/// - libheif 1.15 pastes a tile's alpha plane into a grid with the byte width of the tile's colour plane: a
///   tile with 10-bit colour and an 8-bit alpha image writes past the grid's alpha plane (a heap overflow).
///   It blends an overlay's layer with the layer's alpha rows addressed by the colour plane's stride: a
///   10-bit layer with an 8-bit alpha image reads past the alpha plane (fixed upstream in 2026,
///   GHSA-hg7q-rjr2-8x46). The bit depth that counts is the coded stream's, which only the decoder sees, so
///   a grid or overlay below which an item has an alpha image is refused (`checkLayerAlpha(_:)`): libheif
///   1.15 says it has never seen a grid with tile alpha, encoders put a grid's alpha on the grid item, and
///   an item's own alpha (a grid's, an overlay's) stays allowed.
///
/// - libheif 1.15 inflates deflate-compressed metadata items while reading a file, without a bound; their
///   size is bounded first (`checkMetadata()`).
///
/// Like `HEIFItemReferences`, the reading takes more than libheif does, never less: the `infe`, `iloc` and
/// `idat` boxes of every top-level `meta` (libheif uses those of the last), every location an `iloc` gives
/// an item (libheif takes the first), extents cut short by the end of the data read as far as they go.
///
/// - Important: A value type; reading runs on the calling thread in time linear in the size of the data.
struct HEIFImageItems {
    /// A canvas a `grid` or `iovl` item declares in its data.
    struct Canvas: Equatable {
        /// The item's id.
        var item: UInt32
        /// `grid` or `iovl`.
        var type: String
        /// The declared output size.
        var width: Int, height: Int
    }

    /// The items whose `infe` names them `grid` or `iovl`: the images libheif composes from others.
    private(set) var compositions: Set<UInt32> = []
    /// The canvas of every `grid` and `iovl` item, once per location its data may be read from.
    private(set) var canvases: [Canvas] = []
    /// The coded size of every HEVC sequence parameter set and the largest frame of every AV1 sequence
    /// header in the file (`HEIFImageItems+HEVC.swift`, `+AV1.swift`).
    private(set) var codedSizes: [(width: Int, height: Int)] = []
    /// The bytes of the `mime` items whose content encoding is `deflate`, once per location.
    private(set) var deflatedBytes = 0
    /// The bytes of every item's data, once per location (extents cut at the end of the file).
    private(set) var itemBytes = 0
    /// False when the coded items' data holds more NAL units, OBUs and parameter-set bytes than four times
    /// the file's size plus 1 MiB (only items reading the same bytes over and over do): the check refuses it.
    private(set) var isComplete = true
    /// The size of the file read.
    private(set) var fileSize = 0
    /// The distinct item ids of the `infe` boxes.
    private(set) var itemCount = 0

    /// Reads `data`; bytes that are not a HEIF file give no items.
    init(_ data: Data) {
        fileSize = data.count
        data.withUnsafeBytes { bytes in
            let reader = BoxReader(bytes: bytes)
            let metas = reader.metaChildren()
            var types: [UInt32: Set<UInt32>] = [:]
            var deflated: Set<UInt32> = []
            for children in metas {
                for iinf in children where iinf.type == BoxReader.fourCC("iinf") {
                    Self.readItemTypes(reader, iinf.content, into: &types, deflated: &deflated)
                }
            }
            itemCount = types.count
            let derived = types.filter { $0.value.contains(BoxReader.fourCC("grid")) || $0.value.contains(BoxReader.fourCC("iovl")) }
            compositions = Set(derived.keys)
            var budget = 4 * bytes.count + (1 << 20)
            for children in metas {
                for iprp in children where iprp.type == BoxReader.fourCC("iprp") {
                    for ipco in reader.boxes(in: iprp.content) where ipco.type == BoxReader.fourCC("ipco") {
                        for property in reader.boxes(in: ipco.content) {
                            if property.type == BoxReader.fourCC("hvcC") { codedSizes += Self.codedSizes(inHVCC: property.content, reader) }
                            if property.type == BoxReader.fourCC("av1C") {
                                if let sizes = Self.codedSizes(inAV1C: property.content, reader, budget: &budget) {
                                    codedSizes += sizes
                                } else {
                                    isComplete = false
                                }
                            }
                        }
                    }
                }
                let idat = children.first { $0.type == BoxReader.fourCC("idat") }?.content
                for iloc in children where iloc.type == BoxReader.fourCC("iloc") {
                    Self.readLocations(reader, iloc.content) { item, constructionMethod, extents in
                        guard let itemTypes = types[item] else { return }
                        let itemData = ItemBytes(reader, extents: extents, constructionMethod: constructionMethod, idat: idat)
                        itemBytes += itemData.count
                        if deflated.contains(item) { deflatedBytes += itemData.count }
                        if derived[item] != nil {
                            let prefix = itemData.bytes(reader, at: 0, count: Self.descriptorSize)
                            for type in itemTypes {
                                if let canvas = Self.canvas(of: type, item: item, prefix) { canvases.append(canvas) }
                            }
                        }
                        for type in itemTypes where isComplete {
                            let sizes: [(width: Int, height: Int)]??
                            switch type {
                            case BoxReader.fourCC("hvc1"): sizes = Self.codedSizes(inNALUnits: itemData, reader, budget: &budget)
                            case BoxReader.fourCC("av01"): sizes = Self.codedSizes(inOBUs: itemData, reader, budget: &budget)
                            default: sizes = .some([])
                            }
                            if let sizes = sizes ?? nil { codedSizes += sizes } else { isComplete = false }
                        }
                    }
                }
            }
        }
    }

    /// The most bytes of deflate-compressed metadata (`mime` items with content encoding `deflate`, XMP) a
    /// file may hold: 256 KiB. libheif 1.15 inflates every such item while reading the file (for `info`
    /// too), without a bound: a 100 KB item inflates to 100 MB, and items may all point at the same bytes
    /// (20 of them took 7 s).
    static let maximumDeflatedBytes = 256 << 10

    /// Throws `ImageCodecError.corruptData` when the file holds more deflate-compressed metadata than
    /// `maximumDeflatedBytes`, or when its items' data adds up to more than four times the file plus 1 MiB
    /// (checked before libheif reads the file, for `info` as for `decode`). libheif 1.15 copies the data of
    /// every item while reading the file, and up to 20,000 items of 32 extents may each name the whole
    /// file: 200 items of a 570 KB file copied 3.2 GB (0.5 s), 20,000 of a 6 MB file would copy terabytes.
    func checkMetadata() throws {
        guard itemBytes <= 4 * fileSize + (1 << 20) else {
            throw ImageCodecError.corruptData(format: .heif, message: "items name \(itemBytes) bytes of a \(fileSize)-byte file: read more than four times over")
        }
        guard deflatedBytes <= Self.maximumDeflatedBytes else {
            throw ImageCodecError.corruptData(format: .heif, message: "\(deflatedBytes) bytes of deflate-compressed metadata, more than \(Self.maximumDeflatedBytes): libheif 1.15 inflates them without bound")
        }
    }

    /// The most `dimg` references of one grid or overlay, and the most `iref` entries, times the items of
    /// the file: 1 << 26. libheif 1.15 looks each tile of a grid up among all image items by a linear
    /// search, in `heif_image_handle_has_alpha_channel` (so in `info`) and again before decoding (65,025
    /// references among 19,990 items, a 730 KB file, took 8 s a call); while reading, it scans every `iref`
    /// entry for each item, and rebuilds its list of top-level images for each thumbnail (19,990 items each
    /// the thumbnail of the primary, 900 KB: 4.6 s).
    static let maximumReferenceScans = 1 << 26

    /// Throws `ImageCodecError.corruptData` when the file has so many items, a grid or overlay so many
    /// `dimg` references, or the file so many `iref` entries, that libheif's look-ups of them among the file's items pass
    /// `maximumReferenceScans` (checked before libheif reads the file, for `info` as for `decode`).
    func checkReferenceScans(_ references: HEIFItemReferences) throws {
        // Each item is also looked up among all items' property associations and locations: 19,990 items
        // and no references took 2.5 s a read. 8,192 items pass.
        let (itemScans, itemOverflow) = itemCount.multipliedReportingOverflow(by: itemCount)
        guard !itemOverflow, itemScans <= Self.maximumReferenceScans else {
            throw ImageCodecError.corruptData(format: .heif, message: "\(itemCount) items: libheif 1.15 would search them for minutes")
        }
        let (entryScans, entryOverflow) = references.entryCount.multipliedReportingOverflow(by: itemCount)
        guard !entryOverflow, entryScans <= Self.maximumReferenceScans else {
            throw ImageCodecError.corruptData(format: .heif, message: "\(references.entryCount) item references among \(itemCount) items: libheif 1.15 would search them for minutes")
        }
        for composition in compositions.sorted() {
            let (scans, overflow) = (references.sources[composition]?.count ?? 0).multipliedReportingOverflow(by: itemCount)
            guard !overflow, scans <= Self.maximumReferenceScans else {
                throw ImageCodecError.corruptData(format: .heif, message: "item \(composition) has \(references.sources[composition]?.count ?? 0) references among \(itemCount) items: libheif 1.15 would search them for minutes")
            }
        }
    }

    /// Throws `ImageCodecError.limitExceeded` when a grid or overlay declares a canvas, or an HEVC sequence
    /// parameter set or AV1 sequence header a coded size, past `limits` (`DecodeLimits.check(width:height:)`;
    /// an empty one is left to the libraries, which refuse it), `.corruptData` when the coded items' data
    /// could not be read in full within its budget.
    func check(limits: DecodeLimits) throws {
        for canvas in canvases where canvas.width > 0 && canvas.height > 0 {
            try limits.check(width: canvas.width, height: canvas.height)
        }
        for size in codedSizes where size.width > 0 && size.height > 0 {
            try limits.check(width: size.width, height: size.height)
        }
        guard isComplete else {
            throw ImageCodecError.corruptData(format: .heif, message: "coded item data referenced more than four times over")
        }
    }

    /// Throws `ImageCodecError.limitExceeded(.totalPixels, …)` when the pixels the decode of one item could
    /// make pass `limits.maxTotalPixels`: `decodes` (the most one item's decode starts, from
    /// `HEIFItemReferences.check`) times the file's largest coded image, plus the grids and overlays one
    /// decode composes times the largest canvas. libheif 1.15 decodes a grid's tile once per reference and
    /// places tiles by their `ispe`, so 255 × 255 references to one tile whose `ispe` says 1 × 1 decode it
    /// 65,025 times into a 255 × 255 image: half a minute for a 64 × 104 tile, hours for a larger one, from
    /// a few KB. Encoders' files pass: a 4032 × 3024 grid of 48 tiles of 512 × 512 makes 25 Mpx.
    /// `references` must have passed `HEIFItemReferences.check` (its depth bound keeps the recursion here
    /// shallow).
    func checkWork(_ references: HEIFItemReferences, decodes: Int, limits: DecodeLimits) throws {
        var compositionDecodes: [UInt32: Int] = [:]
        func count(_ item: UInt32) -> Int {
            if let known = compositionDecodes[item] { return known }
            var total = compositions.contains(item) ? 1 : 0
            for child in references.dependencies[item] ?? [] { total = min(total + count(child), 1 << 32) }
            compositionDecodes[item] = total
            return total
        }
        let composed = compositions.map(count).max() ?? 0
        // Saturating: declared sizes come from the data (a grid's 32-bit fields multiply past Int).
        func area(_ width: Int, _ height: Int) -> Int {
            let (area, overflow) = width.multipliedReportingOverflow(by: height)
            return overflow ? .max : area
        }
        let largestCoded = codedSizes.map { area($0.width, $0.height) }.max() ?? 0
        let largestCanvas = canvases.map { area($0.width, $0.height) }.max() ?? 0
        let (codedWork, codedOverflow) = largestCoded.multipliedReportingOverflow(by: decodes)
        let (canvasWork, canvasOverflow) = largestCanvas.multipliedReportingOverflow(by: composed)
        let (work, sumOverflow) = codedWork.addingReportingOverflow(canvasWork)
        guard !codedOverflow, !canvasOverflow, !sumOverflow, work <= limits.maxTotalPixels else {
            throw ImageCodecError.limitExceeded(limit: .totalPixels, actual: codedOverflow || canvasOverflow || sumOverflow ? .max : work,
                                                maximum: limits.maxTotalPixels)
        }
    }

    /// Throws `ImageCodecError.corruptData` when an item below a grid or overlay (a tile or layer, or an item
    /// one is derived from, through any number of `dimg` references) has an alpha image: see the type's
    /// comment. Visits each item once.
    func checkLayerAlpha(_ references: HEIFItemReferences) throws {
        var visited: Set<UInt32> = []
        for composition in compositions.sorted() {
            var stack = references.sources[composition] ?? []
            while let item = stack.popLast() {
                guard visited.insert(item).inserted else { continue }
                if references.mastersOfAuxiliaryImages.contains(item) {
                    throw ImageCodecError.corruptData(format: .heif, message: "item \(composition) composes an image with its own alpha image (item \(item)): libheif 1.15 blends it out of bounds")
                }
                stack += references.sources[item] ?? []
            }
        }
    }

    /// The 18 bytes a descriptor needs at most (an overlay with 32-bit fields).
    private static let descriptorSize = 18

    /// Adds the type of each `infe` (versions 2 and 3; earlier ones have none) to `types`, and the `mime`
    /// items whose content encoding is `deflate` to `deflated`.
    private static func readItemTypes(_ reader: BoxReader, _ content: Range<Int>, into types: inout [UInt32: Set<UInt32>],
                                      deflated: inout Set<UInt32>) {
        guard let version = reader.uint8(at: content.lowerBound) else { return }
        let entries = min(content.lowerBound + (version == 0 ? 6 : 8), content.upperBound)..<content.upperBound
        for infe in reader.boxes(in: entries) where infe.type == BoxReader.fourCC("infe") {
            let start = infe.content.lowerBound, end = infe.content.upperBound
            guard let infeVersion = reader.uint8(at: start), infeVersion >= 2 else { continue }
            let idSize = infeVersion == 2 ? 2 : 4
            guard let item = reader.id(at: start + 4, size: idSize, end: end),
                  start + 4 + idSize + 6 <= end, let type = reader.uint32(at: start + 4 + idSize + 2) else { continue }
            types[item, default: []].insert(type)
            guard type == BoxReader.fourCC("mime") else { continue }
            // item_name, content_type, content_encoding: strings ended by a zero byte (or the box).
            var strings: [[UInt8]] = []
            var offset = start + 4 + idSize + 6
            while strings.count < 3, offset < end {
                let stop = (offset..<end).first { reader.bytes[$0] == 0 } ?? end
                strings.append(Array(reader.bytes[offset..<stop]))
                offset = stop + 1
            }
            if strings.count == 3, strings[2] == Array("deflate".utf8) { deflated.insert(item) }
        }
    }

    /// Calls `body` with each item of an `iloc` box: its id, construction method and extents (offset from
    /// the base offset included, length), read as libheif 1.15 reads them (an extent index only from
    /// version 2 on; field sizes other than 4 and 8 read as absent). Stops where libheif would refuse the box.
    private static func readLocations(_ reader: BoxReader, _ content: Range<Int>,
                                      _ body: (UInt32, Int, [(offset: UInt64, length: UInt64)]) -> Void) {
        var offset = content.lowerBound
        func read(_ size: Int) -> UInt64? {
            let value: UInt64?
            switch size {
            case 2: value = reader.uint16(at: offset).map(UInt64.init)
            case 4: value = reader.uint32(at: offset).map(UInt64.init)
            case 8: value = reader.uint64(at: offset)
            default: return 0
            }
            guard let value, offset + size <= content.upperBound else { return nil }
            offset += size
            return value
        }
        guard let version = reader.uint8(at: offset) else { return }
        offset += 4
        guard let sizes = read(2) else { return }
        let offsetSize = Int(sizes >> 12 & 0xF), lengthSize = Int(sizes >> 8 & 0xF), baseSize = Int(sizes >> 4 & 0xF)
        let indexSize = version > 1 ? Int(sizes & 0xF) : 0
        // libheif refuses the file past 20,000 items or 32 extents per item (which also bounds the loops
        // below when every field size is 0).
        guard let count = read(version < 2 ? 2 : 4), count <= 20_000 else { return }
        for _ in 0..<count {
            guard let item = read(version < 2 ? 2 : 4) else { return }
            var method = 0
            if version >= 1 {
                guard let value = read(2) else { return }
                method = Int(value & 0xF)
            }
            guard read(2) != nil, let base = read(baseSize == 4 || baseSize == 8 ? baseSize : 0),
                  let extentCount = read(2), extentCount <= 32 else { return }
            var extents: [(UInt64, UInt64)] = []
            for _ in 0..<extentCount {
                guard read(indexSize == 4 || indexSize == 8 ? indexSize : 0) != nil,
                      let start = read(offsetSize == 4 || offsetSize == 8 ? offsetSize : 0),
                      let length = read(lengthSize == 4 || lengthSize == 8 ? lengthSize : 0) else { return }
                extents.append((base &+ start, length))
            }
            body(UInt32(truncatingIfNeeded: item), method, extents)
        }
    }

    /// The canvas a grid's (`ImageGrid::parse`) or overlay's (`ImageOverlay::parse`) descriptor declares;
    /// nil for other types and for descriptors libheif refuses as too short.
    private static func canvas(of type: UInt32, item: UInt32, _ bytes: [UInt8]) -> Canvas? {
        func field(at offset: Int, size: Int) -> Int? {
            guard offset + size <= bytes.count else { return nil }
            return bytes[offset..<offset + size].reduce(0) { $0 << 8 | Int($1) }
        }
        guard bytes.count >= 2 else { return nil }
        let size = bytes[1] & 1 == 1 ? 4 : 2
        switch type {
        case BoxReader.fourCC("grid"):
            guard let width = field(at: 4, size: size), let height = field(at: 4 + size, size: size) else { return nil }
            return Canvas(item: item, type: "grid", width: width, height: height)
        case BoxReader.fourCC("iovl"):
            guard let width = field(at: 10, size: size), let height = field(at: 10 + size, size: size) else { return nil }
            return Canvas(item: item, type: "iovl", width: width, height: height)
        default:
            return nil
        }
    }
}
