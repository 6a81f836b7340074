import Foundation
import ImageCodec

/// The tiles of the grid images of an AVIF file, counted from its `iref` boxes before libavif reads it.
///
/// libavif 0.11 opens one AV1 decoder per grid tile and keeps every one, with its last frame, until the
/// grid is done: about 400 KB a tile with dav1d. The grid's canvas is checked against the size limit but
/// not the number of tiles, and tiles under 64 × 64 are refused only once all are decoded: 4,096 tiles of
/// 1 × 1 (a 176 KB file, a 64 × 64 canvas) took 1.6 GB; 65,536 would take 26 GB.
///
/// Counted as libavif finds tiles, and more: every item a `dimg` reference names, in every `iref` of every
/// top-level `meta` (libavif makes each such item a tile of the last grid that names it).
enum AVIFGridTiles {
    /// The items `dimg` references name in `data` (distinct); 0 for bytes that are not an AVIF file.
    static func count(in data: Data) -> Int {
        data.withUnsafeBytes { bytes in
            let reader = BoxReader(bytes: bytes)
            var tiles: Set<UInt32> = []
            for children in reader.metaChildren() {
                for iref in children where iref.type == BoxReader.fourCC("iref") {
                    for reference in reader.itemReferences(in: iref.content) where reference.type == BoxReader.fourCC("dimg") {
                        tiles.formUnion(reference.to)
                    }
                }
            }
            return tiles.count
        }
    }

    /// Throws `ImageCodecError.limitExceeded(.frameCount, …)` when `data` has more grid tiles than
    /// `maximum` (each tile is decoded as a frame of its own).
    static func check(_ data: Data, maximum: Int) throws {
        let tiles = count(in: data)
        guard tiles <= maximum else { throw ImageCodecError.limitExceeded(limit: .frameCount, actual: tiles, maximum: maximum) }
    }
}
