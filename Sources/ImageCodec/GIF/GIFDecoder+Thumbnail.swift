internal import CWebImageGIF
import Foundation

extension GIFDecoder {
    /// The still thumbnail of a GIF whose logical screen is larger than the thumbnail: the first frame on a
    /// transparent screen (as `GIFCanvas` composites it), decoded row by row (in interlace order) into a
    /// `BoxAccumulator` and resized exactly (Lanczos3). Neither the screen nor the frame is allocated at full
    /// size: limits apply to the thumbnail and the accumulator, and the decode work to `DownsamplePlan`'s cap
    /// (the screen, and the first frame's raster, may have up to 4 × `maxPixelsPerFrame` pixels).
    static func decodeThumbnail(_ data: Data, plan: DownsamplePlan, options: DecodeOptions) throws -> Image {
        try plan.check(options.limits)
        var walkLimits = options.limits
        let (cap, overflow) = options.limits.maxPixelsPerFrame.multipliedReportingOverflow(by: DownsamplePlan.workFactor)
        walkLimits.maxPixelsPerFrame = overflow ? .max : cap
        walkLimits.maxTotalPixels = max(walkLimits.maxTotalPixels, walkLimits.maxPixelsPerFrame)
        return try data.withUnsafeBytes { bytes in
            try GIFReader.withHandle(bytes) { gif, input in
                let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
                guard width == plan.sourceWidth, height == plan.sourceHeight else {
                    throw ImageCodecError.invalidDimensions(width: width, height: height)
                }
                let accumulator = try BoxAccumulator(sourceWidth: width, sourceHeight: height, targetWidth: plan.width,
                                                     targetHeight: plan.height, limits: options.limits)
                let scan = try GIFReader.walk(gif, input: input, limits: walkLimits, stopAfterFirstImage: true) { _, frame, gif in
                    try accumulate(frame, from: gif, into: accumulator)
                }
                let first = scan.frames[0]
                let covers = first.left == 0 && first.top == 0 && first.width >= width && first.height >= height
                let hasAlpha = scan.hasTransparency || !covers || scan.frames.contains { $0.disposal == 2 }
                let thumbnail = try accumulator.makeBuffer().resized(width: plan.width, height: plan.height)
                    .converted(to: options.pixelFormat)
                return Image(frames: [ImageFrame(buffer: thumbnail)], format: .gif, loopCount: 1,
                             storedLoopCount: scan.storedLoopCount, hasAlpha: hasAlpha, isProgressive: scan.isInterlaced,
                             originalData: options.keepsOriginalData ? data : nil)
            }
        }
    }

    /// Decodes the current image's rows (`DGifGetLine`) and adds its visible, non-transparent pixels.
    private static func accumulate(_ frame: GIFFrameInfo, from gif: UnsafeMutablePointer<GifFileType>,
                                   into accumulator: BoxAccumulator) throws {
        let palette = GIFCanvas.palette(for: frame, from: gif)
        var line = [GifPixelType](repeating: 0, count: frame.width)
        var colors = [UInt32](repeating: 0, count: frame.width)
        // Columns of the frame inside the screen (a frame is clipped, never enlarging the screen).
        let visible = max(0, min(frame.width, accumulator.sourceWidth - frame.left))
        try line.withUnsafeMutableBufferPointer { row in
            try colors.withUnsafeMutableBufferPointer { out in
                for sourceRow in GIFCanvas.rowOrder(height: frame.height, interlaced: frame.isInterlaced) {
                    guard DGifGetLine(gif, row.baseAddress, Int32(frame.width)) != GIF_ERROR else {
                        throw GIFReader.error(gif)
                    }
                    let y = frame.top + sourceRow
                    guard visible > 0, y < accumulator.sourceHeight else { continue }
                    for x in 0..<visible { out[x] = palette[Int(row[x])] }
                    accumulator.addPackedRow(y: y, x0: frame.left, pixels: out.baseAddress!, count: visible)
                }
            }
        }
    }
}
