extension JPEGDecoder {
    /// The DCT-domain scale denominator (8, 4, 2 or 1) giving the smallest output at least the plan's size.
    /// libjpeg's scaled size is `ceil(side / denominator)`.
    static func scaleDenominator(for plan: DownsamplePlan) -> Int {
        for denominator in [8, 4, 2] {
            let w = (plan.sourceWidth + denominator - 1) / denominator
            let h = (plan.sourceHeight + denominator - 1) / denominator
            if w >= plan.width && h >= plan.height { return denominator }
        }
        return 1
    }

    /// Decodes a thumbnail: DCT scaling, then a Lanczos3 resize to the plan's exact size. Both the scaled
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
        var (buffer, partial) = try decodePixels(session, width: scaled.width, height: scaled.height,
                                                 format: options.pixelFormat)
        let convertsInks = color.transform.map { $0.layout == .cmyk || $0.layout == .invertedCMYK } ?? false
        if convertsInks { color.apply(to: &buffer) }
        // JPEG pixels are opaque: premultiplied or not, the resized RGB is what the transform expects.
        var thumbnail = try buffer.resized(width: plan.width, height: plan.height)
        if !convertsInks { color.apply(to: &thumbnail) }
        return (thumbnail, partial)
    }
}
