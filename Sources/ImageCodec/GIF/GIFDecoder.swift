internal import CWebImageGIF
import Foundation

/// Decodes GIF 87a/89a, still or animated, through giflib (record by record, as `DGifSlurp` walks them).
///
/// - Records are walked as giflib's `DGifSlurp` walks them, so a file it rejects for its structure (bad
///   record, truncated block, no image) is rejected here. The first frame is decoded and composited now; the
///   others' compressed data is only skipped over (block structure checked, LZW not run) and each is
///   decoded on demand by a `GIFFrameSource`, where a broken LZW stream in a later frame throws from
///   `Image.frame(at:)`. With `DecodeOptions.preloadAllFrames` every frame is decoded now, giving exactly
///   `DGifSlurp`'s verdict. `firstFrameOnly` stops after the first image.
/// - Compositing follows the browsers (see `GIFCanvas`): transparent start, background disposal clears to
///   transparent, frames clipped to the logical screen.
/// - Limits: the logical screen is checked before any allocation; the frame count, total pixels and each
///   frame's own size are checked as the walk meets each image, before its pixels are decoded.
/// - Loop count: no NETSCAPE2.0/ANIMEXTS1.0 extension → `loopCount` 1; stored 0 → 0 (forever); stored n → n + 1.
///   `storedLoopCount` keeps the first stored value.
/// - Durations: the graphics control delay (centiseconds) with the browsers' rule (< 0.011 s plays 0.1 s).
/// - `hasAlpha`: any frame with a transparent index, a first frame not covering the logical screen, or any
///   background disposal (each can leave transparent pixels on the canvas).
/// - `DecodeOptions.maxPixelSize` smaller than the logical screen gives a still thumbnail of the first frame
///   on a transparent screen (a GIF that already fits keeps its animation), without a full-size canvas: rows
///   (in interlace order, clipped to the screen) go into a `BoxAccumulator`, which is then resized exactly
///   (Lanczos3); close to, not bit-identical with, compositing at full size and resizing. Limits apply to
///   what is allocated (see `decodeThumbnail`).
///
/// - Important: Stateless and thread-safe.
public enum GIFDecoder {
    /// Decodes `data`.
    ///
    /// - Throws: `ImageCodecError.limitExceeded`, `.invalidDimensions`, `.truncated`, or `.corruptData` with
    ///   giflib's message.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        if let size = options.maxPixelSize, size > 0, data.count >= 10,
           max(Int(data[data.startIndex + 6]) | Int(data[data.startIndex + 7]) << 8,
               Int(data[data.startIndex + 8]) | Int(data[data.startIndex + 9]) << 8) > size {
            // The logical screen (bytes 6…9) is larger than the thumbnail: a still of the first frame.
            let width = Int(data[data.startIndex + 6]) | Int(data[data.startIndex + 7]) << 8
            let height = Int(data[data.startIndex + 8]) | Int(data[data.startIndex + 9]) << 8
            if let plan = try DownsamplePlan.make(width: width, height: height, maxPixelSize: size) {
                return try decodeThumbnail(data, plan: plan, options: options)
            }
        }
        return try data.withUnsafeBytes { bytes in
            try GIFReader.withHandle(bytes) { gif, input in
                let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
                try options.limits.check(width: width, height: height)
                var canvas = try GIFCanvas(width: width, height: height, format: options.pixelFormat)
                var decoded: [ImageFrame] = []
                let eager = options.preloadAllFrames && !options.firstFrameOnly
                let scan = try GIFReader.walk(gif, input: input, limits: options.limits,
                                              stopAfterFirstImage: options.firstFrameOnly) { index, frame, gif in
                    if index == 0 || eager {
                        try canvas.draw(frame, from: gif)
                        decoded.append(ImageFrame(buffer: try canvas.snapshot(options.pixelFormat), duration: frame.duration))
                        try canvas.dispose(frame)
                    } else {
                        // Lazy frames: only the block structure is read now; LZW errors surface in `frame(at:)`.
                        try GIFReader.skipImageData(gif)
                    }
                }
                let stored = scan.storedLoopCount
                let loopCount = loopCount(stored: stored)
                let hasAlpha = scan.hasTransparency || !coversCanvas(scan.frames[0], width: width, height: height)
                    || scan.frames.contains { $0.disposal == 2 }
                let original = options.keepsOriginalData ? data : nil
                if options.firstFrameOnly || scan.frames.count == 1 {
                    let still = ImageFrame(buffer: decoded[0].buffer)
                    return Image(frames: [still], format: .gif, loopCount: 1, storedLoopCount: stored, hasAlpha: hasAlpha,
                                 isProgressive: scan.isInterlaced, originalData: original)
                }
                if eager {
                    return Image(frames: decoded, format: .gif, loopCount: loopCount, storedLoopCount: stored,
                                 hasAlpha: hasAlpha, isProgressive: scan.isInterlaced, originalData: original)
                }
                // The canvas still holds frame 0 after its disposal: the source continues from frame 1.
                let source = GIFFrameSource(data: data, frames: scan.frames, canvas: canvas, next: 1)
                return Image(firstFrame: decoded[0], source: source, format: .gif, loopCount: loopCount,
                             storedLoopCount: stored, hasAlpha: hasAlpha, isProgressive: scan.isInterlaced,
                             originalData: original)
            }
        }
    }

    /// Reads header facts by walking the records and skipping (not decoding) the image data.
    public static func info(_ data: Data) throws -> ImageInfo {
        try data.withUnsafeBytes { bytes in
            try GIFReader.withHandle(bytes) { gif, input in
                let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
                guard width > 0, height > 0 else { throw ImageCodecError.invalidDimensions(width: width, height: height) }
                let scan = try GIFReader.walk(gif, input: input, limits: .none) { _, _, gif in
                    try GIFReader.skipImageData(gif)
                }
                let count = scan.frames.count
                let hasAlpha = scan.hasTransparency || !coversCanvas(scan.frames[0], width: width, height: height)
                    || scan.frames.contains { $0.disposal == 2 }
                return ImageInfo(format: .gif, width: width, height: height, frameCount: count,
                                 loopCount: count > 1 ? loopCount(stored: scan.storedLoopCount) : 1,
                                 storedLoopCount: scan.storedLoopCount, hasAlpha: hasAlpha,
                                 isProgressive: scan.isInterlaced,
                                 durations: count > 1 ? scan.frames.map(\.duration) : [0])
            }
        }
    }

    /// Total plays from the stored NETSCAPE2.0 repeat count: absent → 1, 0 → 0 (forever), n → n + 1.
    static func loopCount(stored: Int?) -> Int {
        guard let stored else { return 1 }
        return stored == 0 ? 0 : stored + 1
    }

    private static func coversCanvas(_ frame: GIFFrameInfo, width: Int, height: Int) -> Bool {
        frame.left == 0 && frame.top == 0 && frame.width >= width && frame.height >= height
    }
}
