extension Image {
    /// The thumbnail of an animated image (APNG, animated WebP) larger than `DecodeOptions.maxPixelSize`:
    /// a still of the first frame, fitted into `maxPixelSize` (Lanczos3), as a grid of thumbnails shows it.
    /// The first frame is composited at canvas size (limits are checked at canvas size), then resized. (GIF
    /// makes its still without a full-size canvas: `GIFDecoder.decodeThumbnail`.)
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
