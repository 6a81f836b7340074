extension Image {
    /// The thumbnail of an animated image larger than `DecodeOptions.maxPixelSize`: a still of the first
    /// frame, fitted into `maxPixelSize` (Lanczos3), as a grid of thumbnails shows it. The frame given is at
    /// canvas size, so its caller composited it at canvas size (limits checked there); the built-in GIF, APNG
    /// and WebP decoders make their stills without a canvas-sized buffer instead (`GIFDecoder.decodeThumbnail`,
    /// `FirstFrameThumbnail`).
    /// Returns `self` when `maxPixelSize` is `nil` or the image already fits. Public for codec modules, which
    /// apply `DecodeOptions.maxPixelSize` the same way.
    public func stillThumbnail(maxPixelSize: Int?) throws -> Image {
        guard let maxPixelSize, maxPixelSize > 0 else { return self }
        let buffer = try firstFrame.buffer.resized(maxPixelSize: maxPixelSize)
        if frameCount == 1 && buffer.width == width && buffer.height == height { return self }
        return Image(frames: [ImageFrame(buffer: buffer)], format: format, loopCount: 1,
                     storedLoopCount: storedLoopCount, hasAlpha: hasAlpha, isProgressive: isProgressive,
                     isPartial: isPartial, scale: scale, orientation: orientation, originalData: originalData,
                     colorSpace: colorSpace, pixelICCProfile: pixelICCProfile)
    }
}
