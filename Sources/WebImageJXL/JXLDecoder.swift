import Foundation
import ImageCodec

/// Decodes JPEG XL through libjxl (see `JXLCodec` for what it does and does not do).
///
/// - Important: Stateless and thread-safe; decoding runs on the calling thread.
public struct JXLDecoder: ImageDecoding {
    /// Makes the decoder.
    public init() {}

    /// The codec's name in errors and logs.
    public var name: String { "libjxl" }
    /// The formats this codec handles (`ImageCodecRegistry` matches on the sniffed format).
    public var formats: [ImageFormat] { [.jpegXL] }
    /// What this codec can do: stills, animations, incremental data.
    public var capabilities: ImageCodecCapabilities { [.still, .animation, .incremental] }

    /// Decodes `data`: every frame of an animation (libjxl decodes them in order), or only the first with
    /// `options.firstFrameOnly`.
    ///
    /// - Throws: `ImageCodecError.limitExceeded` (from the header, before libjxl allocates), `.truncated`,
    ///   `.corruptData`.
    public func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let result = try JXLDecodeRun.run(data, limits: options.limits, pixels: true, firstFrameOnly: options.firstFrameOnly,
                                          colorManagement: options.colorManagement)
        var buffers = result.takeFrames()
        guard let header = result.header, !buffers.isEmpty else { throw ImageCodecError.truncated(format: .jpegXL) }
        // libjxl's straight pixels, in the data colour space it chose or was asked for, through the colour stage.
        let conversion = ColorConversion(colorSpace: result.dataColorSpace, management: options.colorManagement)
        if conversion.changesPixels, let size = options.maxPixelSize, size > 0 {
            // The transform is per pixel: a thumbnail (a still of the first frame, as `stillThumbnail` makes it) is
            // resized first, straight in and out, and converted at its own size.
            buffers = [try buffers[0].resized(maxPixelSize: size)]
        }
        for index in buffers.indices {
            conversion.apply(to: &buffers[index])
            buffers[index].convert(to: options.pixelFormat)  // in place: not shared
        }
        let frames = buffers.indices.map { ImageFrame(buffer: buffers[$0], duration: buffers.count > 1 ? result.durations[$0] : 0) }
        let animated = frames.count > 1
        let image = Image(frames: frames, format: .jpegXL, loopCount: animated ? header.loopCount : 1,
                          storedLoopCount: header.isAnimation ? header.loopCount : nil, hasAlpha: header.hasAlpha,
                          originalData: options.keepsOriginalData ? data : nil, colorSpace: result.originalColorSpace,
                          pixelICCProfile: conversion.pixelICCProfile)
        return try image.stillThumbnail(maxPixelSize: options.maxPixelSize)
    }

    /// The header facts: size (displayed, after orientation), alpha, and every frame header (frames are
    /// skipped, not decoded).
    public func info(_ data: Data) throws -> ImageInfo {
        let result = try JXLDecodeRun.run(data, limits: .none, pixels: false, firstFrameOnly: false)
        guard let header = result.header, !result.durations.isEmpty else { throw ImageCodecError.truncated(format: .jpegXL) }
        let count = result.durations.count
        return ImageInfo(format: .jpegXL, width: header.width, height: header.height, frameCount: count,
                         loopCount: count > 1 ? header.loopCount : 1, storedLoopCount: header.isAnimation ? header.loopCount : nil,
                         hasAlpha: header.hasAlpha, isProgressive: false, durations: count > 1 ? result.durations : [0])
    }

    /// A session that decodes partial data as it arrives (progressive previews), or `nil` when not possible.
    public func makeIncrementalDecoder(options: DecodeOptions) -> (any IncrementalImageDecoding)? {
        JXLIncrementalSession(options: options)
    }
}
