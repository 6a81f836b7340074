import Foundation

extension ThumborPath {
    /// The service's request options for this path, with thumbor's semantics:
    ///
    /// | thumbor | options |
    /// |---|---|
    /// | `trim[:top-left\|:bottom-right][:N]` | `trim` (before anything else) |
    /// | `AxB:CxD` | `sourceCrop` (source pixels; clamped to what the trim left) |
    /// | `WxH` (crop) | `.cover` to W × H, scaled up when smaller (0: aspect ratio) |
    /// | `fit-in` | `.contain`, never scaled up (unless `upscale()`) |
    /// | `full-fit-in` | `.outside`, no crop |
    /// | `adaptive-` | `swapsBoxToMatchSource` |
    /// | `-W`, `x-H` | `flipsHorizontally`, `flipsVertically` (after the resize) |
    /// | `left/right`, `top/bottom` | `gravity` anchor |
    /// | `smart` | `gravity = .smart` |
    /// | `focal(…)` | `focalRegions` |
    /// | format, quality, max_bytes, no_upscale | `format`, `quality`, `maxBytes`, `clampsBoxToSource` |
    /// | other filters | `filters`, in order |
    ///
    /// An animated GIF stays animated (`keepsAnimation`, `keepsAnimationOfGIFOnly`), as thumbor keeps it; the same
    /// window, flips and filters apply to every frame. Other animated sources give their first frame, as thumbor's.
    ///
    /// JPEG output uses libjpeg's Annex K tables (`jpegQuantization = .annexK`), as thumbor's PIL writes it, so
    /// `quality(N)` gives thumbor's look and bytes at N (`/image` uses Robidoux's, 5–6 % smaller at the same look).
    ///
    /// Without `format()` the output keeps the source's format (`.original`), as thumbor's does; `acceptsWebP`
    /// is not consulted (thumbor's `AUTO_WEBP` is off by default).
    ///
    /// - Throws: `ImageServiceError.badOptions` for a malformed filter, an image that is not a URL, or `debug` and
    ///   `meta` (not served).
    public func requestOptions() throws(ImageServiceError) -> ImageRequestOptions {
        guard let source = URL(string: imageURL), let host = source.host, !host.isEmpty else {
            throw .badOptions("no original image was specified in the given URL")
        }
        if isDebug || isMeta { throw .badOptions("\(isDebug ? "debug" : "meta") is not supported") }
        var options = ImageRequestOptions(source: source)
        options.format = .original
        // thumbor's PIL engine keeps a GIF's frames through every part of the URL (`ALLOW_ANIMATED_GIFS`, on by
        // default); other animated sources give it their first frame.
        options.keepsAnimation = true
        options.keepsAnimationOfGIFOnly = true
        // thumbor's PIL writes libjpeg's Annex K tables: `quality(N)` means what it means there.
        options.jpegQuantization = .annexK
        if let trim {
            guard let parsed = SourceTrim(thumbor: trim) else { throw .badOptions("trim: expected trim[:top-left|:bottom-right][:N]") }
            options.trim = parsed
        }
        options.sourceCrop = crop
        switch width {
        case .pixels(let w): options.width = w > 0 ? w : nil
        case .original: options.widthIsOriginal = true
        }
        switch height {
        case .pixels(let h): options.height = h > 0 ? h : nil
        case .original: options.heightIsOriginal = true
        }
        switch fitIn {
        case nil: options.fit = .cover
        case .fitIn, .adaptiveFitIn:
            options.fit = .contain
            options.allowsUpscale = false
        case .fullFitIn, .adaptiveFullFitIn: options.fit = .outside
        }
        options.swapsBoxToMatchSource = fitIn == .adaptiveFitIn || fitIn == .adaptiveFullFitIn
        options.flipsHorizontally = flipsHorizontally
        options.flipsVertically = flipsVertically
        options.gravity = isSmart ? .smart : .anchor(anchor)
        for filter in try ThumborFilterParser.parse(filters) {
            switch filter {
            case .format(let format): options.format = format
            case .quality(let quality): options.quality = quality
            case .noUpscale: options.clampsBoxToSource = true
            case .strip, .ignored: break
            case .maxBytes(let bytes): options.maxBytes = bytes
            case .focal(let box): options.focalRegions.append(box)
            case .output(let output): options.filters.append(output)
            }
        }
        return options
    }

    /// The crop anchor of `halign`/`valign`.
    var anchor: CropAnchor {
        switch (horizontalAlignment, verticalAlignment) {
        case (.center, .middle): return .center
        case (.center, .top): return .north
        case (.center, .bottom): return .south
        case (.left, .middle): return .west
        case (.right, .middle): return .east
        case (.left, .top): return .northWest
        case (.right, .top): return .northEast
        case (.left, .bottom): return .southWest
        case (.right, .bottom): return .southEast
        }
    }
}
