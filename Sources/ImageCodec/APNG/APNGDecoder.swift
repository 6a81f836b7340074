import Foundation

/// Decodes APNG (animated PNG): parses `acTL`/`fcTL`/`fdAT` itself, rebuilds each frame as a standalone PNG
/// for libpng and composites it with every dispose op (none, background, previous) and blend op (source,
/// over). `Image.loopCount` is `num_plays` (total plays, 0 = forever). A default image that is not part of the
/// animation (no `fcTL` before `IDAT`) is not a frame.
///
/// Broken animations, a documented choice: an `acTL` that browsers ignore (0 frames, more than 2^31-1 frames,
/// a second `acTL`) gives the still default image (one frame, `storedLoopCount == nil`), as browsers show it;
/// every other broken animation chunk (CRC, sequence numbers, frame outside the canvas, a frame without data)
/// is an `ImageCodecError.corruptData` error, even when the default image alone would decode.
///
/// `DecodeOptions.maxPixelSize`: a still default image decodes as a PNG thumbnail (row by row); an animation
/// larger than `maxPixelSize` gives a still thumbnail of its first frame, decoded at the frame's own size and
/// never composited on a canvas-sized buffer (`decodeAnimationThumbnail`); one that already fits stays animated.
///
/// - Important: Stateless and thread-safe. Lazily decoded images hold the data and decode frames on demand.
public enum APNGDecoder {
    /// Decodes `data`: the first frame now; the others on demand, or now with `options.preloadAllFrames`;
    /// only the first as a still with `options.firstFrameOnly`. Limits are checked (canvas, frame count and
    /// total pixels) before any pixel allocation.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let container = try data.withUnsafeBytes { try APNGContainer.parse($0) }
        let original = options.keepsOriginalData ? data : nil
        if container.isAnimationValid,
           let plan = try DownsamplePlan.make(width: container.canvasWidth, height: container.canvasHeight,
                                              maxPixelSize: options.maxPixelSize) {
            return try decodeAnimationThumbnail(data, container: container, plan: plan, options: options)
        }
        // Colour: the PNG chunks (iCCP, sRGB, cICP, gAMA + cHRM) apply to every composited frame.
        let colorSpace = data.withUnsafeBytes { PNGColorChunks.read($0) }
        let conversion = ColorConversion(colorSpace: colorSpace, management: options.colorManagement)
        guard container.isAnimationValid else {
            var (buffer, header) = try PNGDecoder.decodeBuffer(data, format: .apng, options: options)
            conversion.apply(to: &buffer)
            return Image(frames: [ImageFrame(buffer: buffer)], format: .apng, loopCount: 1, hasAlpha: header.hasAlpha,
                         isProgressive: header.isInterlaced, originalData: original, colorSpace: colorSpace,
                         pixelICCProfile: conversion.pixelICCProfile)
        }
        let frameCount = options.firstFrameOnly ? 1 : container.frames.count
        try options.limits.check(width: container.canvasWidth, height: container.canvasHeight, frameCount: frameCount)
        let source = APNGFrameSource(data: data, container: container, workingFormat: options.pixelFormat,
                                     conversion: conversion)
        let first = ImageFrame(buffer: try source.decodeFrame(at: 0, pixelFormat: options.pixelFormat),
                               duration: source.duration(at: 0))
        if options.firstFrameOnly {
            return Image(frames: [ImageFrame(buffer: first.buffer)], format: .apng, loopCount: 1,
                         hasAlpha: container.hasAlpha, isProgressive: container.isInterlaced, originalData: original,
                         colorSpace: colorSpace, pixelICCProfile: conversion.pixelICCProfile)
        }
        if options.preloadAllFrames || container.frames.count == 1 {
            var frames = [first]
            for i in 1..<max(container.frames.count, 1) {
                frames.append(ImageFrame(buffer: try source.decodeFrame(at: i, pixelFormat: options.pixelFormat),
                                         duration: source.duration(at: i)))
            }
            return Image(frames: frames, format: .apng, loopCount: container.numPlays, storedLoopCount: container.numPlays,
                         hasAlpha: container.hasAlpha, isProgressive: container.isInterlaced, originalData: original,
                         colorSpace: colorSpace, pixelICCProfile: conversion.pixelICCProfile)
        }
        return Image(firstFrame: first, source: source, format: .apng, loopCount: container.numPlays,
                     storedLoopCount: container.numPlays, hasAlpha: container.hasAlpha,
                     isProgressive: container.isInterlaced, originalData: original, colorSpace: colorSpace,
                     pixelICCProfile: conversion.pixelICCProfile)
    }

    /// Reads canvas size, frame count, loop count and durations from the chunk structure (no pixel decode).
    public static func info(_ data: Data) throws -> ImageInfo {
        let container = try data.withUnsafeBytes { try APNGContainer.parse($0) }
        guard container.isAnimationValid else {
            return ImageInfo(format: .apng, width: container.canvasWidth, height: container.canvasHeight,
                             hasAlpha: container.hasAlpha, isProgressive: container.isInterlaced)
        }
        let durations = container.frames.map { ImageFrame.displayDuration(forStoredDelay: $0.control.storedDelay) }
        return ImageInfo(format: .apng, width: container.canvasWidth, height: container.canvasHeight,
                         frameCount: container.frames.count, loopCount: container.numPlays,
                         storedLoopCount: container.numPlays, hasAlpha: container.hasAlpha,
                         isProgressive: container.isInterlaced, durations: durations)
    }
}
