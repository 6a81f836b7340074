internal import CWebImageCodecShims
import Foundation

/// The first stage of a large shrink: averages blocks of `factorX × factorY` source pixels (a box filter
/// aligned to the source grid), so the reconstruction filter that follows only has to shrink by the
/// remaining factor of 4 to 8. This is libvips' `shrink` + `reduce` split with a wider reducing gap (libvips
/// leaves 2 to 4): the box's own response costs detail near the output's Nyquist frequency, about 0.9
/// SSIMULACRA2 points against one Lanczos3 of the source when it leaves 2.9 (a 5.8× shrink of a photograph), so
/// the reconstruction filter keeps at least 4× of the work; the wide filters still cost about as much as area
/// averaging on large shrinks.
///
/// The last block of a row or column may be narrower than the factor; it averages the pixels it has.
///
/// The rows of a block are summed per column as they come (16-bit sums, one vector add a row) and the blocks are
/// summed and divided once, with the block's last row (`wi_box_average`, in C with an AVX2 clone). Summing each
/// row's blocks as it came, in Swift, took about three quarters of a 4000×3000 → 400×300 Lanczos3 resize once the
/// blocks were 2 pixels wide (`reducingGap` 4).
///
/// - Important: Not thread-safe; owned by one `RowResampler`.
final class BoxPrefilter {
    let factorX: Int
    let factorY: Int
    let sourceWidth: Int
    let sourceHeight: Int
    /// Width and height of the averaged image.
    let width: Int
    let height: Int
    /// Column sums of the block's rows so far (`sourceWidth × 4`, at most `WI_BOX_COLUMN_ROWS` rows each), and
    /// the blocks' 32-bit sums for blocks taller than that (`width × 4`, zero otherwise).
    private let columns: UnsafeMutablePointer<UInt16>
    private let sums: UnsafeMutablePointer<UInt32>
    private let output: UnsafeMutablePointer<UInt8>
    private var rowsInBlock = 0
    private var rowsInColumns = 0
    private var isUsingSums = false
    private var rowsSeen = 0
    /// The divisors of a block of `factorY` rows: its whole blocks and its last, narrower one.
    private let fullDivisor: wi_box_divisor
    private let lastDivisor: wi_box_divisor

    /// The reducing gap: the least shrink left to the reconstruction filter after the box stage.
    static let reducingGap = 4.0

    /// The prefilter factor for shrinking `source` to `destination` samples with a filter: `⌊scale / 4⌋` once
    /// the scale reaches 8 (twice `reducingGap`), else 1 (no prefilter). Area averaging never needs one.
    static func factor(source: Int, destination: Int, filter: ResamplingFilter) -> Int {
        guard filter != .area else { return 1 }
        let scale = Double(source) / Double(destination)
        return scale >= 2 * reducingGap ? Int(scale / reducingGap) : 1
    }

    /// - Throws: `ImageCodecError.allocationFailed`.
    init(sourceWidth: Int, sourceHeight: Int, factorX: Int, factorY: Int) throws {
        self.factorX = factorX
        self.factorY = factorY
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        width = (sourceWidth + factorX - 1) / factorX
        height = (sourceHeight + factorY - 1) / factorY
        let count = width * 4
        let columnCount = sourceWidth * 4
        guard let c = malloc(columnCount * MemoryLayout<UInt16>.stride) else {
            throw ImageCodecError.allocationFailed(byteCount: columnCount * 2)
        }
        guard let s = calloc(count, MemoryLayout<UInt32>.stride) else {
            free(c)
            throw ImageCodecError.allocationFailed(byteCount: count * 4)
        }
        guard let o = malloc(count) else {
            free(c)
            free(s)
            throw ImageCodecError.allocationFailed(byteCount: count)
        }
        columns = c.bindMemory(to: UInt16.self, capacity: columnCount)
        sums = s.bindMemory(to: UInt32.self, capacity: count)
        output = o.bindMemory(to: UInt8.self, capacity: count)
        (fullDivisor, lastDivisor) = Self.divisors(sourceWidth: sourceWidth, width: width, factorX: factorX, rows: factorY)
    }

    /// The divisors of a block of `rows` rows: `factorX × rows` pixels, and the last block's (narrower) count.
    private static func divisors(sourceWidth: Int, width: Int, factorX: Int, rows: Int) -> (wi_box_divisor, wi_box_divisor) {
        (wi_box_make_divisor(factorX * rows), wi_box_make_divisor((sourceWidth - (width - 1) * factorX) * rows))
    }

    deinit {
        free(columns)
        free(sums)
        free(output)
    }

    /// Adds one source row (`sourceWidth` RGBA pixels, premultiplied). Returns the averaged row when this
    /// row completes a block of rows (valid until the next call), else `nil`.
    func add(row: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        rowsInBlock += 1
        rowsSeen += 1
        let isBlockComplete = rowsInBlock == factorY || rowsSeen == sourceHeight
        if !isBlockComplete || isUsingSums {
            if rowsInColumns == Int(WI_BOX_COLUMN_ROWS) {
                // A block taller than a 16-bit column sum holds: move the column sums into the blocks' sums.
                wi_box_reduce_columns(sums, columns, sourceWidth, factorX)
                rowsInColumns = 0
                isUsingSums = true
            }
            wi_box_add_row(columns, row, sourceWidth * 4, rowsInColumns == 0 ? 1 : 0)
            rowsInColumns += 1
            guard isBlockComplete else { return nil }
        }
        // The last block of rows may be shorter.
        let (full, last) = rowsInBlock == factorY ? (fullDivisor, lastDivisor)
            : Self.divisors(sourceWidth: sourceWidth, width: width, factorX: factorX, rows: rowsInBlock)
        if isUsingSums {
            wi_box_reduce_columns(sums, columns, sourceWidth, factorX)
            wi_box_divide(output, sums, (width - 1) * 4, full)
            wi_box_divide(output + (width - 1) * 4, sums + (width - 1) * 4, 4, last)
            isUsingSums = false
        } else {
            // The common case: the earlier rows' column sums plus this row, summed and divided in one pass.
            wi_box_average(output, rowsInColumns > 0 ? UnsafePointer(columns) : nil, row, sourceWidth, factorX, full, last)
        }
        rowsInColumns = 0
        rowsInBlock = 0
        return UnsafePointer(output)
    }
}
