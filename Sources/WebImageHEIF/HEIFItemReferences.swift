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

    /// The entries of every `iref` (one per type and from-item, whatever their number of targets).
    private(set) var entryCount = 0

    /// Reads the references of `data`; bytes that are not a HEIF file give no references.
    init(_ data: Data) {
        data.withUnsafeBytes { bytes in
            let reader = BoxReader(bytes: bytes)
            for children in reader.metaChildren() {
                for iref in children where iref.type == BoxReader.fourCC("iref") {
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

    /// Records the entries of one `iref` box (`BoxReader.itemReferences(in:)`).
    private mutating func readReferences(_ reader: BoxReader, _ content: Range<Int>) {
        for reference in reader.itemReferences(in: content) {
            entryCount += 1
            for to in reference.to {
                if reference.type == BoxReader.fourCC("dimg") {
                    dependencies[reference.from, default: []].append(to)
                    sources[reference.from, default: []].append(to)
                }
                if reference.type == BoxReader.fourCC("auxl") {
                    dependencies[to, default: []].append(reference.from)
                    mastersOfAuxiliaryImages.insert(to)
                }
            }
        }
    }
}
