import Foundation

/// Averages the pixels of a large source, arriving in any order (Adam7 passes, GIF interlaced rows, a frame
/// rectangle inside a screen), over integer-factor boxes: the thumbnail path for decoders that cannot give
/// rows top to bottom, without a full-size buffer (libjpeg's DCT scaling is the same idea).
///
/// The box grid is `ceil(sourceWidth / factorX) × ceil(sourceHeight / factorY)` cells, with the factors the
/// largest integers that keep the grid at least the target size, so `makeBuffer()` gives a box-filtered image
/// between 1× and 2× the target per side; the caller then resizes it exactly (Lanczos3), as the other
/// thumbnail paths do. Every source pixel must be added at most once; pixels never added count as
/// transparent (a GIF frame on a transparent screen). Memory: 16 bytes per cell plus one `Int32` per
/// source column — O(thumbnail).
///
/// - Important: Not thread-safe; owned by one decode.
final class BoxAccumulator {
    let sourceWidth: Int
    let sourceHeight: Int
    /// Source pixels per cell, horizontally and vertically.
    let factorX: Int
    let factorY: Int
    /// The grid (and `makeBuffer()`) size.
    let width: Int
    let height: Int

    /// Premultiplied R, G, B, A sums per cell; `factorX * factorY * 255` fits in `UInt32`.
    private let sums: UnsafeMutablePointer<UInt32>
    /// The cell column of each source column.
    private let cellOfColumn: [Int32]

    /// A grid for a `sourceWidth × sourceHeight` source shrunk to at least `targetWidth × targetHeight`.
    /// Checks the grid against `limits` (it is allocated; the source is not).
    ///
    /// - Throws: `invalidDimensions`, `limitExceeded`, `allocationFailed`.
    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, limits: DecodeLimits) throws {
        guard sourceWidth > 0, sourceHeight > 0, targetWidth > 0, targetHeight > 0 else {
            throw ImageCodecError.invalidDimensions(width: sourceWidth, height: sourceHeight)
        }
        var fx = max(1, sourceWidth / targetWidth), fy = max(1, sourceHeight / targetHeight)
        // Keep every cell's sum of 8-bit values within UInt32 (only a tiny thumbnail of a huge image comes near).
        while fx * fy > Int(UInt32.max) / 256 {
            if fx >= fy { fx /= 2 } else { fy /= 2 }
        }
        let width = (sourceWidth + fx - 1) / fx, height = (sourceHeight + fy - 1) / fy
        try limits.check(width: width, height: height)
        let (cells, overflow) = width.multipliedReportingOverflow(by: height)
        let (count, overflow2) = cells.multipliedReportingOverflow(by: 4)
        guard !overflow, !overflow2, let memory = calloc(count, MemoryLayout<UInt32>.stride) else {
            throw ImageCodecError.allocationFailed(byteCount: overflow || overflow2 ? .max : count * 4)
        }
        self.sums = memory.assumingMemoryBound(to: UInt32.self)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.factorX = fx
        self.factorY = fy
        self.width = width
        self.height = height
        self.cellOfColumn = (0..<sourceWidth).map { Int32($0 / fx) }
    }

    deinit { free(sums) }

    /// Adds the pixels of source row `y` at columns `firstColumn, firstColumn + step, …` (below
    /// `sourceWidth`), read from `row` at the same columns (straight RGBA8, `sourceWidth * 4` bytes).
    /// Premultiplies each as `PixelBuffer.convert` does. Rows outside the source are ignored.
    func addStraightRow(y: Int, row: UnsafePointer<UInt8>, firstColumn: Int, step: Int) {
        guard y >= 0, y < sourceHeight, step > 0, firstColumn >= 0 else { return }
        let base = sums + (y / factorY) * width * 4
        cellOfColumn.withUnsafeBufferPointer { cells in
            var x = firstColumn
            while x < sourceWidth {
                let p = row + x * 4
                if p[3] != 0 { Self.addStraight(p, to: base + Int(cells[x]) * 4) }
                x += step
            }
        }
    }

    /// Adds one straight RGBA8 pixel (alpha not 0) to a cell's sums, premultiplied (rounded) unless opaque.
    @inline(__always)
    private static func addStraight(_ p: UnsafePointer<UInt8>, to cell: UnsafeMutablePointer<UInt32>) {
        let a = UInt32(p[3])
        if a == 255 {
            cell[0] &+= UInt32(p[0]); cell[1] &+= UInt32(p[1]); cell[2] &+= UInt32(p[2])
        } else {
            cell[0] &+= (UInt32(p[0]) * a + 127) / 255
            cell[1] &+= (UInt32(p[1]) * a + 127) / 255
            cell[2] &+= (UInt32(p[2]) * a + 127) / 255
        }
        cell[3] &+= a
    }

    /// Adds `count` straight RGBA8 pixels (`count * 4` bytes at `pixels`) at source row `y`, columns
    /// `x0 ..< x0 + count` (clipped to the source): a frame rectangle placed inside a larger canvas (the first
    /// frame of an APNG or animated WebP on its transparent canvas). Premultiplies as `addStraightRow` does.
    func addStraightPixels(y: Int, x0: Int, pixels: UnsafePointer<UInt8>, count: Int) {
        guard y >= 0, y < sourceHeight, x0 >= 0 else { return }
        let end = min(sourceWidth, x0 + count)
        guard x0 < end else { return }
        let base = sums + (y / factorY) * width * 4
        cellOfColumn.withUnsafeBufferPointer { cells in
            for x in x0..<end {
                let p = pixels + (x - x0) * 4
                if p[3] != 0 { Self.addStraight(p, to: base + Int(cells[x]) * 4) }
            }
        }
    }

    /// Adds `count` packed pixels (`r | g << 8 | b << 16 | a << 24`, each opaque or 0, as `GIFCanvas` uses)
    /// at source row `y`, columns `x0 ..< x0 + count` (clipped to the source).
    func addPackedRow(y: Int, x0: Int, pixels: UnsafePointer<UInt32>, count: Int) {
        guard y >= 0, y < sourceHeight, x0 >= 0 else { return }
        let end = min(sourceWidth, x0 + count)
        guard x0 < end else { return }
        let base = sums + (y / factorY) * width * 4
        cellOfColumn.withUnsafeBufferPointer { cells in
            for x in x0..<end {
                let color = pixels[x - x0]
                guard color != 0 else { continue }
                let cell = base + Int(cells[x]) * 4
                cell[0] &+= color & 0xFF
                cell[1] &+= (color >> 8) & 0xFF
                cell[2] &+= (color >> 16) & 0xFF
                cell[3] &+= color >> 24
            }
        }
    }

    /// The box averages as a premultiplied `width × height` buffer: each cell's sums divided (rounded) by the
    /// source pixels it covers (fewer at the right and bottom edges).
    func makeBuffer() throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8Premultiplied, zeroed: false)
        let stride = buffer.bytesPerRow
        let (w, h, fx, fy, sw, sh, sums) = (width, height, factorX, factorY, sourceWidth, sourceHeight, sums)
        buffer.withUnsafeMutableBytes { raw in
            guard let out = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for cy in 0..<h {
                let rows = UInt32(min(fy, sh - cy * fy))
                for cx in 0..<w {
                    let area = rows * UInt32(min(fx, sw - cx * fx))
                    let cell = sums + (cy * w + cx) * 4
                    let p = out + cy * stride + cx * 4
                    for c in 0..<4 { p[c] = UInt8(min(255, (cell[c] + area / 2) / area)) }
                }
            }
        }
        return buffer
    }
}

@available(*, unavailable, message: "BoxAccumulator is owned by one decode")
extension BoxAccumulator: Sendable {}
