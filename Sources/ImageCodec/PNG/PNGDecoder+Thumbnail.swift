import Foundation

extension PNGDecoder {
    /// Adam7 pass geometry: first column, first row, column step, row step of each of the seven passes.
    static let adam7Passes: [(x: Int, y: Int, dx: Int, dy: Int)] = [
        (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]

    /// The block size (the same both ways) of a non-interlaced PNG's shrink-on-load (`DecodeOptions.resizesToFit`
    /// `false`) for `maxPixelSize`: the largest that keeps the block-averaged image at least twice the fitted size per
    /// side; 1 (no shrink: the decode is the exact resize) when the image is smaller than that. The image is then
    /// `ceil(side / factor)` pixels per side, its last row and column averaging what is left.
    public static func shrinkOnLoadFactor(width: Int, height: Int, maxPixelSize: Int) -> Int {
        guard width > 0, height > 0, maxPixelSize > 0 else { return 1 }
        let fitted = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
        return max(1, min(width / (2 * fitted.width), height / (2 * fitted.height)))
    }

    /// Decodes a thumbnail of the stream `session` has read the header of, never allocating the full-size
    /// image: row by row into a `RowResampler` when not interlaced; for Adam7 (whose rows are only complete
    /// after the last pass) every pass's pixels go into a `BoxAccumulator` as they arrive, then the
    /// box-averaged image is resized exactly (Lanczos3). Limits apply to the thumbnail and the accumulator
    /// (plus `DownsamplePlan`'s work cap on the source).
    static func decodeThumbnail(_ session: PNGDecodeSession, header: PNGDecodeSession.Header, plan: DownsamplePlan,
                                options: DecodeOptions, format: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        try plan.check(options.limits)
        let rowBytes = header.width * 4  // width * 4 fits: checked by the plan's work cap
        guard let row = malloc(max(rowBytes, 1)) else { throw ImageCodecError.allocationFailed(byteCount: rowBytes) }
        defer { free(row) }
        let bytes = row.assumingMemoryBound(to: UInt8.self)
        if header.isInterlaced {
            let accumulator = try BoxAccumulator(sourceWidth: header.width, sourceHeight: header.height,
                                                 targetWidth: plan.width, targetHeight: plan.height, limits: options.limits)
            let passes = try session.startRows()
            guard passes == adam7Passes.count else {
                throw ImageCodecError.corruptData(format: .png, message: "unexpected interlace passes \(passes)")
            }
            // libpng writes only this pass's pixels into the row (the others are stale): take just those.
            for pass in adam7Passes {
                for y in 0..<header.height {
                    try session.readRow(into: row)
                    if y >= pass.y, (y - pass.y) % pass.dy == 0 {
                        accumulator.addStraightRow(y: y, row: bytes, firstColumn: pass.x, step: pass.dx)
                    }
                }
            }
            try session.finishRows()
            return try accumulator.makeBuffer().resized(width: plan.width, height: plan.height)
                .converted(to: format)
        }
        let factor = options.resizesToFit ? 1
            : shrinkOnLoadFactor(width: header.width, height: header.height, maxPixelSize: max(plan.width, plan.height))
        if factor > 1 {
            // Shrink-on-load only: factor × factor block averages (premultiplied, as a resize averages them) for the
            // caller's one resample; no Lanczos here.
            let box = try BoxPrefilter(sourceWidth: header.width, sourceHeight: header.height, factorX: factor, factorY: factor)
            try options.limits.check(width: box.width, height: box.height)
            var shrunk = try PixelBuffer(width: box.width, height: box.height, pixelFormat: .rgba8Premultiplied)
            guard let premultiplied = malloc(max(rowBytes, 1)) else { throw ImageCodecError.allocationFailed(byteCount: rowBytes) }
            defer { free(premultiplied) }
            let scratch = premultiplied.assumingMemoryBound(to: UInt8.self)
            let passes = try session.startRows()
            guard passes == 1 else {
                throw ImageCodecError.corruptData(format: .png, message: "unexpected interlace passes \(passes)")
            }
            var produced = 0
            for _ in 0..<header.height {
                try session.readRow(into: row)
                RowResampler.premultiply(bytes, into: scratch, pixels: header.width)
                if let averaged = box.add(row: scratch), produced < box.height {
                    let offset = produced * shrunk.bytesPerRow
                    shrunk.withUnsafeMutableBytes { out in
                        out.baseAddress!.advanced(by: offset).copyMemory(from: averaged, byteCount: box.width * 4)
                    }
                    produced += 1
                }
            }
            try session.finishRows()
            return shrunk.converted(to: format)
        }
        let resampler = try RowResampler(sourceWidth: header.width, sourceHeight: header.height,
                                         destinationWidth: plan.width, destinationHeight: plan.height,
                                         sourceFormat: .rgba8, resultFormat: format)
        let passes = try session.startRows()
        guard passes == 1 else {
            throw ImageCodecError.corruptData(format: .png, message: "unexpected interlace passes \(passes)")
        }
        for _ in 0..<header.height {
            try session.readRow(into: row)
            try resampler.consume(row: UnsafeRawBufferPointer(start: row, count: rowBytes))
        }
        try session.finishRows()
        return try resampler.finish()
    }
}
