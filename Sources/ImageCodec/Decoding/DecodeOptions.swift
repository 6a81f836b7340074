/// How to decode: limits, pixel format, which frames, and whether to keep the encoded bytes.
///
/// ```swift
/// let image = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
/// ```
///
/// - Important: A value type; thread-safe.
public struct DecodeOptions: Sendable, Hashable {
    /// Limits checked from the header before any allocation. Default `DecodeLimits.default`.
    public var limits: DecodeLimits
    /// The pixel format of decoded frames. Default `.rgba8Premultiplied` (decode for display).
    public var pixelFormat: PixelBuffer.PixelFormat
    /// Decode every frame of an animation now instead of on demand. Default `false` (YYImage's lazy frames).
    public var preloadAllFrames: Bool
    /// Decode only the first frame of an animation, giving a still image. Default `false`.
    public var firstFrameOnly: Bool
    /// Keep the encoded bytes in `Image.originalData`. Default `true`.
    public var keepsOriginalData: Bool
    /// Longest side, in pixels, of a downsampled (thumbnail) decode; `nil` (default) decodes at full size.
    /// Aspect ratio is kept (`PixelBuffer.fittingSize`) and the image is never enlarged.
    ///
    /// JPEG scales in the DCT (1/2, 1/4, 1/8) then resizes (Lanczos3); non-interlaced PNG streams rows into a
    /// `RowResampler`; still WebP scales inside libwebp; interlaced PNG decodes whole then resizes. Animated
    /// images (GIF, APNG, animated WebP) larger than `maxPixelSize` give a still thumbnail of their first
    /// frame, made from that frame at its own size without a canvas-sized buffer (so a tiny animation that
    /// declares a huge canvas costs a thumbnail); animations that already fit stay animated. `limits` apply to what is
    /// allocated (the thumbnail), so an image too big for them at full size can still decode as a thumbnail;
    /// the source may then have at most 4 × `limits.maxPixelsPerFrame` pixels (a cap on decode work).
    public var maxPixelSize: Int?
    /// Whether a downsampled decode (`maxPixelSize`) is resized to exactly the fitted size. Default `true`.
    ///
    /// `false` is libvips' shrink-on-load for a caller that resamples the result once more itself (a crop window,
    /// a `cover`): JPEG then gives its DCT-scaled image as it is (`JPEGDecoder.thumbnailIntermediateSize`: the
    /// largest of 1/2, 1/4, 1/8 still at least twice the fitted size per side, colour-converted, its last row and
    /// column partly padding), so the caller's resample is the only one. Two Lanczos3 passes in a row (an exact
    /// downsampled decode, then the caller's) filter twice and clamp to 8 bits in between: up to 29 levels off a
    /// single resample at text edges. Non-interlaced PNG gives block averages instead (`PNGDecoder.shrinkOnLoadFactor`:
    /// the largest whole block keeping at least twice the fitted size; the exact resize when no block of 2 does).
    /// Other formats ignore it (their downsampled decode is one exact resample).
    public var resizesToFit: Bool
    /// What to do with the file's colour description (ICC profile, CICP, PNG gamma). Default `.sRGB`: every
    /// decoded image is sRGB; untagged and sRGB images are not transformed. See `ColorManagement`.
    public var colorManagement: ColorManagement

    /// Makes options; every parameter defaults to the value documented on its property.
    public init(limits: DecodeLimits = .default, pixelFormat: PixelBuffer.PixelFormat = .rgba8Premultiplied,
                preloadAllFrames: Bool = false, firstFrameOnly: Bool = false, keepsOriginalData: Bool = true,
                maxPixelSize: Int? = nil, colorManagement: ColorManagement = .sRGB, resizesToFit: Bool = true) {
        self.colorManagement = colorManagement
        self.resizesToFit = resizesToFit
        self.limits = limits
        self.pixelFormat = pixelFormat
        self.preloadAllFrames = preloadAllFrames
        self.firstFrameOnly = firstFrameOnly
        self.keepsOriginalData = keepsOriginalData
        self.maxPixelSize = maxPixelSize
    }
}
