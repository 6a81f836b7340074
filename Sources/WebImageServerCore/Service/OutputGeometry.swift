import ImageCodec
/// The sizes of one request's output, from the source's displayed size (after EXIF orientation) and the
/// options: the size the source is scaled to, the crop taken from it, and the longest side a downsampled
/// decode should give (`nil`: decode at full size).
///
/// - Important: A value type; thread-safe.
public struct OutputGeometry: Sendable, Hashable {
    /// The size the (oriented) source is scaled to.
    public var scaledWidth: Int
    /// The size the (oriented) source is scaled to.
    public var scaledHeight: Int
    /// The final output size (a centred crop of the scaled image for `.cover`, else the scaled size).
    public var outputWidth: Int
    /// The final output size.
    public var outputHeight: Int
    /// The longest side to ask the decoder for (`DecodeOptions.maxPixelSize`), or `nil` when the output is
    /// not smaller than the source (full decode, then resize).
    public var decodePixelSize: Int?

    /// The geometry for a source of `width` × `height` (displayed, after orientation).
    ///
    /// - `w` and `h`: `.cover` scales by the larger ratio and crops the centre to exactly `w` × `h`;
    ///   `.contain` scales by the smaller ratio; `.fill` stretches to `w` × `h`.
    /// - One of them: scales to it, keeping the aspect ratio. Neither: the source size.
    /// - `.outside` with `w` and `h`: scales by the larger ratio, without cropping.
    /// Upscaling happens when asked for, except that `.contain` with `allowsUpscale` false keeps a source that fits
    /// the box at its size (thumbor's `fit-in`); the output pixel limit is checked by the caller.
    public init(sourceWidth width: Int, sourceHeight height: Int, targetWidth: Int?, targetHeight: Int?, fit: ImageFit,
                allowsUpscale: Bool = true) {
        let w = Double(width), h = Double(height)
        var scaleX: Double, scaleY: Double
        switch (targetWidth, targetHeight) {
        case let (tw?, th?):
            let rx = Double(tw) / w, ry = Double(th) / h
            switch fit {
            case .cover, .outside: (scaleX, scaleY) = (max(rx, ry), max(rx, ry))
            case .contain: (scaleX, scaleY) = (min(rx, ry), min(rx, ry))
            case .fill: (scaleX, scaleY) = (rx, ry)
            }
        case let (tw?, nil): (scaleX, scaleY) = (Double(tw) / w, Double(tw) / w)
        case let (nil, th?): (scaleX, scaleY) = (Double(th) / h, Double(th) / h)
        case (nil, nil): (scaleX, scaleY) = (1, 1)
        }
        if fit == .contain, !allowsUpscale, scaleX > 1 || scaleY > 1 { (scaleX, scaleY) = (1, 1) }
        var sw = max(1, Int((w * scaleX).rounded()))
        var sh = max(1, Int((h * scaleY).rounded()))
        if fit == .cover, let tw = targetWidth, let th = targetHeight {
            sw = max(sw, tw)
            sh = max(sh, th)
            (outputWidth, outputHeight) = (tw, th)
        } else if fit == .fill, let tw = targetWidth, let th = targetHeight {
            (sw, sh) = (tw, th)
            (outputWidth, outputHeight) = (tw, th)
        } else {
            (outputWidth, outputHeight) = (sw, sh)
        }
        (scaledWidth, scaledHeight) = (sw, sh)
        // The decoder keeps the aspect ratio, so ask for the smallest longest side whose decode covers both scaled
        // sides: the decode is then exactly the scaled size in nearly every case, so `shape` only crops. Rounding up
        // instead (as before) often decoded one pixel more than the scaled size, and the second resize that
        // followed (e.g. 401 → 400 px) blurred fine detail and shifted it by up to half a pixel (SSIMULACRA2 88
        // instead of 99 on a chart; scripts/quality/resize_quality.py). The search starts from the scaled size's
        // own longest side (a decode's longest side is the side asked for, so none smaller can cover it), not from
        // the larger axis ratio: a rounded-up short side made that ratio 1201/1707 for `w=1200` of a 1707×1008
        // diagram, and a 1201 → 1200 resize cost it 13 points.
        let decodeScale = max(Double(sw) / w, Double(sh) / h)
        if decodeScale < 1 {
            let longest = max(width, height)
            var side = max(1, width >= height ? sw : sh)
            while side < longest {
                let fitted = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: side)
                if fitted.width >= sw && fitted.height >= sh { break }
                side += 1
            }
            decodePixelSize = side < longest ? side : nil
        } else {
            decodePixelSize = nil
        }
    }
}
