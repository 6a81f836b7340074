import Foundation

extension ColorConversion {
    /// A thumbnail of a deep (10/12/16-bit) image whose colour is converted at 16 bits, with the transform run on
    /// a small image: the straight 16-bit RGBA `source` (`width` × `height`, rows `bytesPerRow` apart, native byte
    /// order) is shrunk at 16 bits by whole `k` × `k` boxes (`deepThumbnailShrinkFactor`: the largest `k` that
    /// leaves at least twice the thumbnail per side, libvips' shrink-on-load), the shrunk image
    /// (`deepThumbnailGridSize`) is converted at 16 bits into straight 8-bit RGBA, and that is resized (Lanczos3)
    /// to `PixelBuffer.fittingSize(width:height:maxPixelSize:)`. So a wide-gamut or PQ source keeps its precision
    /// through the conversion (reducing it to 8 bits first loses visible accuracy in very wide gamuts and in PQ's
    /// shadows), and the transform runs on at most 16 times the thumbnail's pixels (4 per side when `k` is 1,
    /// about 2–4 per side otherwise), not on the image.
    ///
    /// Box averages weigh colour by alpha (as `BoxAccumulator` does for PNG). Returns `nil` when
    /// `convertsDeepPixels` is false or the sizes do not fit (the caller takes its 8-bit path then).
    ///
    /// - Throws: `ImageCodecError.allocationFailed` / `ImageProcessingError` from the grid's buffers and the resize.
    /// - Important: Thread-safe; O(source pixels) for the averaging, O(grid pixels) for the transform.
    public func deepThumbnail(rgba16 source: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerRow: Int,
                              maxPixelSize: Int) throws -> PixelBuffer? {
        guard convertsDeepPixels, width > 0, height > 0, maxPixelSize > 0, bytesPerRow >= width * 8,
              source.count >= bytesPerRow * height, let base = source.baseAddress else { return nil }
        let target = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
        let grid = Self.deepThumbnailGridSize(width: width, height: height, maxPixelSize: maxPixelSize)
        let gridBytesPerRow = grid.width * 8
        let averaged = UnsafeMutableRawBufferPointer.allocate(byteCount: gridBytesPerRow * grid.height, alignment: 16)
        defer { averaged.deallocate() }
        Self.boxAverage(base, width: width, height: height, bytesPerRow: bytesPerRow,
                        into: averaged.baseAddress!.assumingMemoryBound(to: UInt16.self), gridWidth: grid.width,
                        gridHeight: grid.height,
                        factor: Self.deepThumbnailShrinkFactor(width: width, height: height, maxPixelSize: maxPixelSize))
        var converted = try PixelBuffer(width: grid.width, height: grid.height, pixelFormat: .rgba8)
        guard convert(rgba16: UnsafeRawBufferPointer(averaged), bytesPerRow: gridBytesPerRow, into: &converted) else {
            return nil
        }
        guard converted.width != target.width || converted.height != target.height else { return converted }
        return try converted.resized(width: target.width, height: target.height)
    }

    /// The box `deepThumbnail` shrinks a `width` × `height` image by before converting it: the largest whole
    /// factor that leaves at least twice the thumbnail per side (libvips' shrink-on-load margin, as the JPEG
    /// decoder's DCT scaling), 1 when the image is smaller than that.
    public static func deepThumbnailShrinkFactor(width: Int, height: Int, maxPixelSize: Int) -> Int {
        let target = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
        return max(1, min(width / max(1, 2 * target.width), height / max(1, 2 * target.height)))
    }

    /// The size of the shrunk image `deepThumbnail` converts: the image divided by the shrink factor, rounded up
    /// (the last row and column of boxes may be partial).
    public static func deepThumbnailGridSize(width: Int, height: Int, maxPixelSize: Int) -> (width: Int, height: Int) {
        let k = deepThumbnailShrinkFactor(width: width, height: height, maxPixelSize: maxPixelSize)
        return ((width + k - 1) / k, (height + k - 1) / k)
    }

    /// Bytes `deepThumbnail` allocates besides the 16-bit source and the thumbnail it returns: the 16-bit grid
    /// (8 bytes a cell) and its 8-bit conversion (4 bytes a cell). For memory budgets.
    public static func deepThumbnailWorkingByteCount(width: Int, height: Int, maxPixelSize: Int) -> Int {
        let grid = deepThumbnailGridSize(width: width, height: height, maxPixelSize: maxPixelSize)
        let (cells, overflow) = grid.width.multipliedReportingOverflow(by: grid.height)
        return overflow || cells > Int.max / 12 ? .max : cells * 12
    }

    /// Averages each `factor` × `factor` box (column `x` and row `y` go to cell `x / factor`, `y / factor`) at
    /// 16 bits, colour weighted by alpha; a fully transparent box is 0.
    private static func boxAverage(_ source: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int,
                                   into grid: UnsafeMutablePointer<UInt16>, gridWidth: Int, gridHeight: Int, factor: Int) {
        var sums = [UInt64](repeating: 0, count: gridWidth * 4)
        for gy in 0..<gridHeight {
            let rows = gy * factor..<min(height, (gy + 1) * factor)
            for i in sums.indices { sums[i] = 0 }
            for y in rows {
                let row = (source + y * bytesPerRow).assumingMemoryBound(to: UInt16.self)
                for x in 0..<width {
                    let p = row + x * 4, cell = x / factor * 4
                    let a = UInt64(p[3])
                    sums[cell] &+= UInt64(p[0]) &* a
                    sums[cell + 1] &+= UInt64(p[1]) &* a
                    sums[cell + 2] &+= UInt64(p[2]) &* a
                    sums[cell + 3] &+= a
                }
            }
            let out = grid + gy * gridWidth * 4
            for gx in 0..<gridWidth {
                let alpha = sums[gx * 4 + 3]
                let columns = min(width, (gx + 1) * factor) - gx * factor
                let count = UInt64(max(1, rows.count * columns))
                let o = out + gx * 4
                guard alpha > 0 else {
                    o[0] = 0; o[1] = 0; o[2] = 0; o[3] = 0
                    continue
                }
                for c in 0..<3 { o[c] = UInt16(min(65535, (sums[gx * 4 + c] + alpha / 2) / alpha)) }
                o[3] = UInt16(min(65535, (alpha + count / 2) / count))
            }
        }
    }
}
