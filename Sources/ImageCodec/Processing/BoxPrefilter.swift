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
/// - Important: Not thread-safe; owned by one `RowResampler`.
final class BoxPrefilter {
    let factorX: Int
    let factorY: Int
    let sourceWidth: Int
    let sourceHeight: Int
    /// Width and height of the averaged image.
    let width: Int
    let height: Int
    private let sums: UnsafeMutablePointer<UInt32>
    private let output: UnsafeMutablePointer<UInt8>
    private var rowsInBlock = 0
    private var rowsSeen = 0

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
        guard let s = calloc(count, MemoryLayout<UInt32>.stride) else {
            throw ImageCodecError.allocationFailed(byteCount: count * 4)
        }
        guard let o = malloc(count) else {
            free(s)
            throw ImageCodecError.allocationFailed(byteCount: count)
        }
        sums = s.bindMemory(to: UInt32.self, capacity: count)
        output = o.bindMemory(to: UInt8.self, capacity: count)
    }

    deinit {
        free(sums)
        free(output)
    }

    /// Adds one source row (`sourceWidth` RGBA pixels, premultiplied). Returns the averaged row when this
    /// row completes a block of rows (valid until the next call), else `nil`.
    func add(row: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        let fx = factorX
        let pixels = UnsafeRawPointer(row)
        let blockSums = UnsafeMutableRawPointer(sums)
        for block in 0..<width {
            let first = block * fx
            let count = min(fx, sourceWidth - first)
            // One pixel's four channels as one vector.
            var sum = blockSums.load(fromByteOffset: block * 16, as: SIMD4<UInt32>.self)
            for i in first..<(first + count) {
                sum &+= SIMD4<UInt32>(truncatingIfNeeded: pixels.loadUnaligned(fromByteOffset: i * 4, as: SIMD4<UInt8>.self))
            }
            blockSums.storeBytes(of: sum, toByteOffset: block * 16, as: SIMD4<UInt32>.self)
        }
        rowsInBlock += 1
        rowsSeen += 1
        guard rowsInBlock == factorY || rowsSeen == sourceHeight else { return nil }
        // Divide by the block's pixel count with a rounded 2^32 reciprocal.
        let fullCount = UInt64(fx * rowsInBlock)
        let lastCount = UInt64((sourceWidth - (width - 1) * fx) * rowsInBlock)
        let fullReciprocal = ((1 << 32) + fullCount / 2) / fullCount
        let lastReciprocal = ((1 << 32) + lastCount / 2) / lastCount
        for block in 0..<width {
            let reciprocal = block == width - 1 ? lastReciprocal : fullReciprocal
            for c in 0..<4 {
                let i = block * 4 + c
                output[i] = UInt8(truncatingIfNeeded: (UInt64(sums[i]) &* reciprocal &+ (1 << 31)) >> 32)
            }
        }
        sums.update(repeating: 0, count: width * 4)
        rowsInBlock = 0
        return UnsafePointer(output)
    }
}
