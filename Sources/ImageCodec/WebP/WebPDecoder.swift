internal import CWebImageWebP
import Foundation

/// Decodes WebP: lossy (`VP8 `), lossless (`VP8L`), with alpha, and animated, through libwebp.
///
/// - Still images decode with `WebPDecode` straight into the `PixelBuffer`'s memory (one allocation),
///   premultiplied by libwebp (`MODE_rgbA`) when decoding for display, else straight (`MODE_RGBA`).
/// - Animations use `WebPAnimDecoder` (libwebp blends and disposes on its canvas): the first frame now, the
///   others on demand through a `WebPAnimationSource` unless `preloadAllFrames`. Durations come from each
///   frame's ANMF duration with the browsers' rule; `loopCount` is the ANIM loop count (total plays, 0 =
///   forever), which is also `storedLoopCount`.
/// - Colour: the `ICCP` chunk of a still image goes to the colour stage (`ColorManagement`), which converts
///   libwebp's straight pixels before premultiplication; animation frames (libwebp's canvas, premultiplied when
///   decoding for display) are un-premultiplied for it and premultiplied again.
/// - Limits are checked from `WebPGetFeatures` / `WebPDemux` (headers only) before anything is allocated.
/// - `DecodeOptions.maxPixelSize` scales still images inside libwebp (limits apply to the scaled size);
///   an animation larger than it gives a still thumbnail of its first frame, decoded at the frame's own size
///   and never composited on a canvas-sized buffer (`decodeAnimationThumbnail`); one that already fits stays
///   animated.
/// - Memory: an animation decoded whole holds `WebPAnimDecoder`'s two canvases plus each frame handed out
///   (three canvases for the first frame), for as long as the lazily decoded image lives.
///
/// - Important: Stateless and thread-safe.
public enum WebPDecoder {
    /// Decodes `data`.
    ///
    /// - Throws: `ImageCodecError.limitExceeded`, `.truncated`, `.corruptData` with libwebp's status.
    public static func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let container = try data.withUnsafeBytes { try WebPContainer.parse($0) }
        let original = options.keepsOriginalData ? data : nil
        guard container.isAnimated else {
            let size = scaledSize(width: container.width, height: container.height, maxPixelSize: options.maxPixelSize)
            try options.limits.check(width: size.width, height: size.height)
            // The colour stage runs on libwebp's straight (or opaque) pixels, then they are premultiplied.
            let colorSpace = data.withUnsafeBytes { WebPColorChunk.iccProfile($0) }.map { ImageColorSpace(iccProfile: $0) }
            let color = ColorStage.plan(colorSpace: colorSpace, layout: .rgba, management: options.colorManagement)
            var buffer = try data.withUnsafeBytes {
                try decodeStill($0, width: size.width, height: size.height, isScaled: size.width != container.width,
                                format: color.transform == nil ? options.pixelFormat : .rgba8)
            }
            color.apply(to: &buffer)
            buffer.convert(to: options.pixelFormat)
            return Image(frames: [ImageFrame(buffer: buffer)], format: .webp, loopCount: 1, storedLoopCount: nil,
                         hasAlpha: container.hasAlpha, originalData: original, colorSpace: colorSpace,
                         pixelICCProfile: color.pixelICCProfile)
        }
        if let plan = try DownsamplePlan.make(width: container.width, height: container.height,
                                              maxPixelSize: options.maxPixelSize) {
            return try decodeAnimationThumbnail(data, container: container, plan: plan, options: options)
        }
        let frameCount = options.firstFrameOnly ? 1 : container.frameCount
        try options.limits.check(width: container.width, height: container.height, frameCount: frameCount)
        let premultiplied = options.pixelFormat == .rgba8Premultiplied
        // Every frame through the colour stage (on libwebp's canvas, un-premultiplied for it when needed).
        let colorSpace = data.withUnsafeBytes { WebPColorChunk.iccProfile($0) }.map { ImageColorSpace(iccProfile: $0) }
        let conversion = ColorConversion(colorSpace: colorSpace, management: options.colorManagement)
        let decoder = try WebPAnimDecoderHandle(data: data, premultiplied: premultiplied)
        guard decoder.canvasWidth == container.width, decoder.canvasHeight == container.height else {
            throw ImageCodecError.corruptData(format: .webp, message: "canvas size mismatch")
        }
        let durations = container.durations
        let loopCount = container.storedLoopCount ?? 0
        guard var first = try decoder.decodeNext(copy: true, format: options.pixelFormat) else {
            throw ImageCodecError.corruptData(format: .webp, message: "no first frame")
        }
        conversion.apply(to: &first)
        if options.firstFrameOnly || container.frameCount == 1 {
            return Image(frames: [ImageFrame(buffer: first)], format: .webp,
                         loopCount: container.frameCount == 1 ? 1 : loopCount,
                         storedLoopCount: container.storedLoopCount, hasAlpha: container.hasAlpha, originalData: original,
                         colorSpace: colorSpace, pixelICCProfile: conversion.pixelICCProfile)
        }
        if options.preloadAllFrames {
            var frames = [ImageFrame(buffer: first, duration: durations[0])]
            for i in 1..<container.frameCount {
                guard var buffer = try decoder.decodeNext(copy: true, format: options.pixelFormat) else { break }
                conversion.apply(to: &buffer)
                frames.append(ImageFrame(buffer: buffer, duration: durations[i]))
            }
            return Image(frames: frames, format: .webp, loopCount: loopCount, storedLoopCount: container.storedLoopCount,
                         hasAlpha: container.hasAlpha, originalData: original, colorSpace: colorSpace,
                         pixelICCProfile: conversion.pixelICCProfile)
        }
        let source = WebPAnimationSource(data: data, durations: durations, decoder: decoder, premultiplied: premultiplied,
                                         conversion: conversion)
        return Image(firstFrame: ImageFrame(buffer: first, duration: durations[0]), source: source, format: .webp,
                     loopCount: loopCount, storedLoopCount: container.storedLoopCount, hasAlpha: container.hasAlpha,
                     originalData: original, colorSpace: colorSpace, pixelICCProfile: conversion.pixelICCProfile)
    }

    /// Reads header facts (size, frames, loop count, durations, alpha) without decoding pixels.
    public static func info(_ data: Data) throws -> ImageInfo {
        let c = try data.withUnsafeBytes { try WebPContainer.parse($0) }
        return ImageInfo(format: .webp, width: c.width, height: c.height, frameCount: c.frameCount,
                         loopCount: c.isAnimated && c.frameCount > 1 ? (c.storedLoopCount ?? 0) : 1,
                         storedLoopCount: c.storedLoopCount, hasAlpha: c.hasAlpha, durations: c.durations)
    }

    /// The decoded size for `maxPixelSize` (a still image's longest side), keeping the aspect ratio, never enlarging.
    static func scaledSize(width: Int, height: Int, maxPixelSize: Int?) -> (width: Int, height: Int) {
        guard let maxSide = maxPixelSize, maxSide > 0, max(width, height) > maxSide else { return (width, height) }
        let scale = Double(maxSide) / Double(max(width, height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// Decodes a still image into a new buffer with `WebPDecode` writing into the buffer's memory, scaled by
    /// libwebp (`use_scaling`) when `isScaled`.
    static func decodeStill(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, isScaled: Bool,
                                    format: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImageCodecError.corruptData(format: .webp, message: "libwebp version mismatch")
        }
        if isScaled {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
        }
        // Not zeroed: a decode that returns VP8_STATUS_OK wrote every pixel, and any other status throws.
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: format, zeroed: false)
        let stride = buffer.bytesPerRow
        let status = buffer.withUnsafeMutableBytes { out -> VP8StatusCode in
            config.output.colorspace = format == .rgba8Premultiplied ? MODE_rgbA : MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            config.output.u.RGBA.stride = Int32(stride)
            config.output.u.RGBA.size = out.count
            return WebPDecode(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
        }
        WebPFreeDecBuffer(&config.output)
        guard status == VP8_STATUS_OK else { throw WebPContainer.error(status) }
        return buffer
    }
}
