internal import CWebImageCodecShims
import Foundation

/// Resizes an image that arrives one row at a time, holding only the few rows the filter needs: the
/// streaming half of downsampled (thumbnail) decoding for PNG and GIF, where a huge image must never need
/// its full-size buffer.
///
/// ```swift
/// let resampler = try RowResampler(sourceWidth: 8000, sourceHeight: 6000,
///                                  destinationWidth: 400, destinationHeight: 300, sourceFormat: .rgba8)
/// for row in decodedRows { try row.withUnsafeBytes { try resampler.consume(row: $0) } }
/// let thumbnail = try resampler.finish()      // 400×300, premultiplied unless resultFormat says otherwise
/// ```
///
/// How it works: each source row is multiplied into the accumulators of the destination rows whose vertical
/// filter window covers it (a vertical pass first, in 32-bit fixed point); when a destination row's window
/// is complete it is filtered horizontally straight into the result. So memory is the result plus a few
/// rows of `sourceWidth` accumulators (about `2 × support × max(1, destinationHeight / sourceHeight)`
/// of them; 7 rows for Lanczos3 at any shrink factor), never the whole source.
///
/// When a filter other than `.area` shrinks an axis by 8 or more, blocks of `⌊factor / 4⌋` source pixels are
/// averaged first (`BoxPrefilter`, libvips' shrink-then-reduce) and the filter weighs each block at its true
/// centre and size; this makes Lanczos3 as cheap as area averaging for thumbnails, visibly identical to
/// filtering the full source on photographs (±2 levels on smooth content; white noise keeps its mean).
///
/// `PixelBuffer.resized(width:height:filter:)` runs through this type, so feeding the same rows gives
/// exactly the same pixels as `resized`.
///
/// - Important: Not thread-safe: one decoder owns it and feeds it from one thread at a time.
///   Straight-alpha rows (`sourceFormat: .rgba8`) are premultiplied before filtering, so transparent pixels
///   never bleed their colour into their neighbours.
public final class RowResampler {
    /// Source width in pixels.
    public let sourceWidth: Int
    /// Source height in pixels: how many rows `consume(row:)` expects.
    public let sourceHeight: Int
    /// Width of the result.
    public let destinationWidth: Int
    /// Height of the result.
    public let destinationHeight: Int
    /// The filter. Default `ResamplingFilter.default`.
    public let filter: ResamplingFilter
    /// The pixel format of the rows given to `consume(row:)`. Default `.rgba8Premultiplied`.
    public let sourceFormat: PixelBuffer.PixelFormat
    /// The pixel format of the result. Defaults to `sourceFormat`.
    public let resultFormat: PixelBuffer.PixelFormat
    /// How many source rows have been given so far.
    public private(set) var rowsConsumed = 0
    /// How many destination rows are complete so far (rows `0 ..< rowsProduced` of `partialResult()`).
    public var rowsProduced: Int { nextToFinish }
    /// Whether every source row has been given.
    public var isComplete: Bool { rowsConsumed == sourceHeight }
    /// How many rows of 32-bit accumulators the resampler holds, each `sourceWidth` pixels wide (or the
    /// block-averaged width for shrinks by 8 or more): its working memory is at most
    /// `accumulatorRowCount × sourceWidth × 16` bytes plus the result. Small and independent of
    /// `sourceHeight`: 2 for `.area` shrinking, 7 for `.lanczos3` shrinking.
    public var accumulatorRowCount: Int { slots }

    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    /// Accumulator rows in flight: destination row `y` uses slot `y % slots`.
    private let slots: Int
    /// Bytes in one source row, and values in one (prefiltered) row the filter sees.
    private let sourceElements: Int
    private let filteredElements: Int
    /// The box stage of a large shrink (factor 8 or more), or `nil`.
    private let prefilter: BoxPrefilter?
    /// Rows the filter has seen (prefiltered rows when there is a prefilter).
    private var filteredRows = 0
    private let accumulators: UnsafeMutablePointer<Int32>
    private let straightScratch: UnsafeMutablePointer<UInt8>?
    private var nextToOpen = 0
    private var nextToFinish = 0
    private var destination: PixelBuffer

    /// Makes a resampler and allocates the result (zero-filled until rows are produced).
    ///
    /// - Throws: `ImageProcessingError.invalidSize` for a non-positive or oversized source or destination;
    ///   `ImageCodecError.allocationFailed` when the result cannot be allocated.
    public convenience init(sourceWidth: Int, sourceHeight: Int, destinationWidth: Int, destinationHeight: Int,
                            filter: ResamplingFilter = .default, sourceFormat: PixelBuffer.PixelFormat = .rgba8Premultiplied,
                            resultFormat: PixelBuffer.PixelFormat? = nil) throws {
        try self.init(sourceWidth: sourceWidth, sourceHeight: sourceHeight, destinationWidth: destinationWidth,
                      destinationHeight: destinationHeight, filter: filter, sourceFormat: sourceFormat,
                      resultFormat: resultFormat, windowX: nil, windowY: nil)
    }

    /// Makes a resampler for a source whose last column and row stand for only part of a pixel: `sourceExtent`
    /// is the picture's true size in source pixels, e.g. `side / 4` for a JPEG decoded at 1/4 by DCT scaling,
    /// whose `ceil(side / 4)` pixels end with a partial one. The output maps onto `[0, extent)` of each axis (a
    /// window from 0), so detail lands where a resize of the full-size image puts it. An extent that is not a
    /// partial last pixel (`count - 1 < extent < count`) is ignored: the whole axis.
    convenience init(sourceWidth: Int, sourceHeight: Int, destinationWidth: Int, destinationHeight: Int,
                     filter: ResamplingFilter = .default, sourceFormat: PixelBuffer.PixelFormat = .rgba8Premultiplied,
                     resultFormat: PixelBuffer.PixelFormat? = nil, sourceExtent: (width: Double, height: Double)?) throws {
        func window(_ extent: Double?, _ count: Int) -> SampleWindow? {
            guard let extent, extent.isFinite, extent > Double(count - 1), extent < Double(count) else { return nil }
            return SampleWindow(origin: 0, span: extent)
        }
        try self.init(sourceWidth: sourceWidth, sourceHeight: sourceHeight, destinationWidth: destinationWidth,
                      destinationHeight: destinationHeight, filter: filter, sourceFormat: sourceFormat,
                      resultFormat: resultFormat, windowX: window(sourceExtent?.width, sourceWidth),
                      windowY: window(sourceExtent?.height, sourceHeight))
    }

    /// A resampler of the part `windowX` × `windowY` of the source (each `nil` for the whole axis): what
    /// `PixelBuffer.resized(width:height:from:filter:)` runs. Every source row is still consumed; rows outside the
    /// window are skipped.
    init(sourceWidth: Int, sourceHeight: Int, destinationWidth: Int, destinationHeight: Int,
         filter: ResamplingFilter, sourceFormat: PixelBuffer.PixelFormat, resultFormat: PixelBuffer.PixelFormat?,
         windowX: SampleWindow?, windowY: SampleWindow?) throws {
        guard sourceWidth > 0, sourceHeight > 0 else {
            throw ImageProcessingError.invalidSize(width: sourceWidth, height: sourceHeight)
        }
        try PixelBuffer.checkProcessedSize(width: destinationWidth, height: destinationHeight)
        let (elements, overflow) = sourceWidth.multipliedReportingOverflow(by: 4)
        guard !overflow, elements <= 1 << 28 else {
            throw ImageProcessingError.invalidSize(width: sourceWidth, height: sourceHeight)
        }
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.destinationWidth = destinationWidth
        self.destinationHeight = destinationHeight
        self.filter = filter
        self.sourceFormat = sourceFormat
        self.resultFormat = resultFormat ?? sourceFormat
        let spanX = windowX.map { max(1, Int($0.span.rounded())) } ?? sourceWidth
        let spanY = windowY.map { max(1, Int($0.span.rounded())) } ?? sourceHeight
        let factorX = BoxPrefilter.factor(source: spanX, destination: destinationWidth, filter: filter)
        let factorY = BoxPrefilter.factor(source: spanY, destination: destinationHeight, filter: filter)
        if factorX > 1 || factorY > 1 {
            prefilter = try BoxPrefilter(sourceWidth: sourceWidth, sourceHeight: sourceHeight, factorX: factorX, factorY: factorY)
        } else {
            prefilter = nil
        }
        let filteredWidth = prefilter?.width ?? sourceWidth
        let filteredHeight = prefilter?.height ?? sourceHeight
        horizontal = try ResampleWeights.cached(sourceCount: sourceWidth, destinationCount: destinationWidth, filter: filter,
                                         blockFactor: factorX, window: windowX)
        vertical = try ResampleWeights.cached(sourceCount: sourceHeight, destinationCount: destinationHeight, filter: filter,
                                       blockFactor: factorY, window: windowY)
        destination = try PixelBuffer(width: destinationWidth, height: destinationHeight)
        slots = Self.maximumRowsInFlight(vertical, sourceHeight: filteredHeight)
        filteredElements = filteredWidth * 4
        let (total, overflow2) = slots.multipliedReportingOverflow(by: filteredElements)
        guard !overflow2, total <= 1 << 28 else {
            throw ImageProcessingError.invalidSize(width: destinationWidth, height: destinationHeight)
        }
        sourceElements = elements
        let bytes = total * MemoryLayout<Int32>.stride
        guard let memory = malloc(bytes) else { throw ImageCodecError.allocationFailed(byteCount: bytes) }
        accumulators = memory.bindMemory(to: Int32.self, capacity: total)
        if sourceFormat == .rgba8 {
            guard let scratch = malloc(elements) else {
                free(memory)
                throw ImageCodecError.allocationFailed(byteCount: elements)
            }
            straightScratch = scratch.bindMemory(to: UInt8.self, capacity: elements)
        } else {
            straightScratch = nil
        }
    }

    deinit {
        free(accumulators)
        free(straightScratch)
    }

    /// Gives the next source row: `sourceWidth * 4` bytes of RGBA in `sourceFormat` (extra bytes are ignored).
    /// Completes every destination row whose filter window ends at this row.
    ///
    /// - Throws: `ImageProcessingError.rowTooShort` or `.tooManyRows`; the resampler is unchanged then.
    public func consume(row: UnsafeRawBufferPointer) throws {
        guard rowsConsumed < sourceHeight else { throw ImageProcessingError.tooManyRows(sourceHeight: sourceHeight) }
        guard row.count >= sourceElements, let base = row.baseAddress else {
            throw ImageProcessingError.rowTooShort(byteCount: row.count, expected: sourceElements)
        }
        var source = base.assumingMemoryBound(to: UInt8.self)
        if let scratch = straightScratch {
            Self.premultiply(source, into: scratch, pixels: sourceWidth)
            source = UnsafePointer(scratch)
        }
        rowsConsumed += 1
        if let prefilter {
            if let averaged = prefilter.add(row: source) { scatter(averaged) }
        } else {
            scatter(source)
        }
    }

    /// Multiplies one (prefiltered) row into the accumulators of the destination rows whose windows cover it,
    /// then emits the destination rows whose windows end here.
    private func scatter(_ source: UnsafePointer<UInt8>) {
        let j = filteredRows
        let n = filteredElements
        while nextToOpen < destinationHeight && vertical.start[nextToOpen] <= j {
            (accumulators + (nextToOpen % slots) * n).update(repeating: 0, count: n)
            nextToOpen += 1
        }
        for y in nextToFinish..<nextToOpen {
            let k = j - vertical.start[y]
            guard k >= 0, k < vertical.length[y] else { continue }
            let w = vertical.weights[y * vertical.stride + k]
            if w == 0 { continue }
            wi_resample_accumulate(accumulators + (y % slots) * n, source, n, w)
        }
        filteredRows += 1
        while nextToFinish < nextToOpen && vertical.start[nextToFinish] + vertical.length[nextToFinish] - 1 <= j {
            emitRow(nextToFinish)
            nextToFinish += 1
        }
    }

    /// Gives `count` consecutive source rows stored `bytesPerRow` apart in `rows` (e.g. a batch of scanlines
    /// from libjpeg or a decoded strip). Same as calling `consume(row:)` for each.
    ///
    /// - Throws: `ImageProcessingError.rowTooShort` when `rows` is too small for `count` rows (nothing is
    ///   consumed then), `.tooManyRows` when `count` rows would pass `sourceHeight` (the rows before are kept).
    public func consume(rows: UnsafeRawBufferPointer, bytesPerRow: Int, count: Int) throws {
        guard count > 0 else { return }
        let (span, o1) = bytesPerRow.multipliedReportingOverflow(by: count - 1)
        let (needed, o2) = span.addingReportingOverflow(sourceElements)
        guard bytesPerRow >= sourceElements, !o1, !o2, rows.count >= needed else {
            throw ImageProcessingError.rowTooShort(byteCount: rows.count, expected: o1 || o2 ? .max : needed)
        }
        for k in 0..<count {
            let start = k * bytesPerRow
            try consume(row: UnsafeRawBufferPointer(rebasing: rows[start ..< start + sourceElements]))
        }
    }

    /// The result, once every source row has been given. May be called again; each call returns the result.
    ///
    /// - Throws: `ImageProcessingError.incompleteSource` when rows are missing.
    public func finish() throws -> PixelBuffer {
        guard isComplete else {
            throw ImageProcessingError.incompleteSource(rowsConsumed: rowsConsumed, sourceHeight: sourceHeight)
        }
        return destination.converted(to: resultFormat)
    }

    /// The result so far: rows `0 ..< rowsProduced` are final, the rest transparent black. Copies the result
    /// (O(destination pixels)); for progressive display of a partial download.
    public func partialResult() -> PixelBuffer {
        destination.converted(to: resultFormat)
    }

    /// Filters accumulator row `y` horizontally into destination row `y` (`wi_resample_emit_row`: 64-bit sums,
    /// alpha clamped to 0…255, colour to 0…alpha, as ringing filters overshoot).
    private func emitRow(_ y: Int) {
        let acc = UnsafePointer(accumulators + (y % slots) * filteredElements)
        let h = horizontal
        let width = destinationWidth
        let rowOffset = y * destination.bytesPerRow
        destination.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            wi_resample_emit_row(acc, h.start, h.length, h.weights, h.stride, width,
                                 (base + rowOffset).assumingMemoryBound(to: UInt8.self),
                                 Int32(2 * ResampleWeights.fractionBits))
        }
    }

    /// Premultiplies `pixels` straight RGBA pixels with the same rounding as `PixelBuffer.convert(to:)`.
    static func premultiply(_ source: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, pixels: Int) {
        for i in 0..<pixels {
            let s = source + i * 4, d = out + i * 4
            let a = UInt32(s[3])
            d[3] = s[3]
            if a == 255 {
                d[0] = s[0]; d[1] = s[1]; d[2] = s[2]
            } else {
                d[0] = UInt8(truncatingIfNeeded: (UInt32(s[0]) * a + 127) / 255)
                d[1] = UInt8(truncatingIfNeeded: (UInt32(s[1]) * a + 127) / 255)
                d[2] = UInt8(truncatingIfNeeded: (UInt32(s[2]) * a + 127) / 255)
            }
        }
    }

    /// The most destination rows whose windows are open at once while rows stream in.
    private static func maximumRowsInFlight(_ v: ResampleWeights, sourceHeight: Int) -> Int {
        var open = 0, finished = 0, most = 1
        for j in 0..<sourceHeight {
            while open < v.destinationCount && v.start[open] <= j { open += 1 }
            most = max(most, open - finished)
            while finished < open && v.start[finished] + v.length[finished] - 1 <= j { finished += 1 }
        }
        return most
    }
}

@available(*, unavailable)
extension RowResampler: Sendable {}
