extension JPEGDecoder {
    /// The size of the DCT-scaled image a thumbnail decode of a `width` × `height` JPEG allocates before its
    /// Lanczos3 resize to `maxPixelSize` (the same choice as the decoder's, for memory accounting such as
    /// `DecodeBudget`); the full size when no scaling applies.
    public static func thumbnailIntermediateSize(width: Int, height: Int, maxPixelSize: Int) -> (width: Int, height: Int) {
        let d = thumbnailScaleDenominator(width: width, height: height, maxPixelSize: maxPixelSize)
        return ((width + d - 1) / d, (height + d - 1) / d)
    }

    /// The DCT scale denominator (1, 2, 4 or 8) a thumbnail decode of a `width` × `height` JPEG at `maxPixelSize`
    /// uses: its image is `ceil(side / d)` pixels per side holding `side / d` of picture (the last pixel partly
    /// padding). 1 when no scaling applies (no downsampling, or sizes the plan refuses).
    public static func thumbnailScaleDenominator(width: Int, height: Int, maxPixelSize: Int) -> Int {
        guard width > 0, height > 0,
              let plan = try? DownsamplePlan.make(width: width, height: height, maxPixelSize: maxPixelSize) else {
            return 1
        }
        return scaleDenominator(for: plan)
    }

    /// How many times the plan's size the DCT-scaled image must be at least, so the Lanczos3 that follows still
    /// does a real reduction: libvips' shrink-on-load margin. DCT scaling to just above the target (margin 1) left
    /// a 1–2× Lanczos and visibly softer output on fine detail (scripts/quality/resize_quality.py).
    static let lanczosMargin = 2

    /// The DCT-domain scale denominator (8, 4, 2 or 1) giving the smallest output at least `lanczosMargin` × the
    /// plan's size. libjpeg's scaled size is `ceil(side / denominator)`.
    static func scaleDenominator(for plan: DownsamplePlan) -> Int {
        for denominator in [8, 4, 2] {
            let w = (plan.sourceWidth + denominator - 1) / denominator
            let h = (plan.sourceHeight + denominator - 1) / denominator
            if w >= plan.width * lanczosMargin && h >= plan.height * lanczosMargin { return denominator }
        }
        return 1
    }

    /// Decodes a thumbnail: DCT scaling, then a Lanczos3 resize to the plan's exact size (or the DCT-scaled image as
    /// it is, when `options.resizesToFit` is `false`). Both the scaled
    /// image and the thumbnail are checked against the limits before allocation; the full size never is
    /// allocated (only the work cap applies to it).
    /// The colour transform is per pixel, so it runs on the smallest buffer: the thumbnail, after the resize (up to
    /// 4× fewer pixels than the DCT-scaled image). CMYK inks are the exception: they are converted before the
    /// resize, as they cannot be resampled as RGBA (K sits where alpha is).
    static func decodeThumbnail(_ session: JPEGDecodeSession, plan: DownsamplePlan, options: DecodeOptions,
                                color: ColorPlan = .none) throws -> (PixelBuffer, partial: Bool) {
        try plan.check(options.limits)
        let denominator = scaleDenominator(for: plan)
        let scaled = try session.setScale(1, denominator)
        try options.limits.check(width: scaled.width, height: scaled.height)
        if !options.resizesToFit {
            // Shrink-on-load only: the caller resamples this once (colour converted first, as a full-size decode is).
            return try decodePixels(session, width: scaled.width, height: scaled.height, format: options.pixelFormat,
                                    converting: color.transform)
        }
        var (buffer, partial) = try decodePixels(session, width: scaled.width, height: scaled.height,
                                                 format: options.pixelFormat)
        let convertsInks = color.transform.map { $0.layout == .cmyk || $0.layout == .invertedCMYK } ?? false
        if convertsInks { color.apply(to: &buffer) }
        // JPEG pixels are opaque: premultiplied or not, the resized RGB is what the transform expects. The scaled
        // image is `ceil(side / d)` pixels for `side / d` of picture (its last pixel is partly padding): the resize
        // maps onto the picture only, or detail drifts by up to 0.2 output pixels towards the far edges (a
        // 5470 px photo at 400×300: SSIMULACRA2 88.7 instead of 97.0, scripts/quality/resize_quality.py).
        let extent: (width: Double, height: Double)? = denominator == 1 ? nil
            : (Double(plan.sourceWidth) / Double(denominator), Double(plan.sourceHeight) / Double(denominator))
        var thumbnail = try buffer.resized(width: plan.width, height: plan.height, sourceExtent: extent)
        if !convertsInks { color.apply(to: &thumbnail) }
        return (thumbnail, partial)
    }
}
