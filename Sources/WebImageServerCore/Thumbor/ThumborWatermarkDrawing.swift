import Foundation
import ImageCodec

/// Thumbor's `watermark()` placement: its alpha, its size ratios, its positions (pixels, negative from the far
/// edge, `Np` percent, `center`, `repeat`), drawn blended, as thumbor's filter computes them.
///
/// - Important: Stateless; thread-safe.
enum ThumborWatermarkDrawing {
    /// `image` with `mark` drawn on it as `spec` says.
    static func draw(_ mark: PixelBuffer, on image: PixelBuffer, spec: ThumborWatermark) throws -> PixelBuffer {
        let (iw, ih) = (image.width, image.height)
        var mark = mark
        if spec.widthRatio != nil || spec.heightRatio != nil {
            let size = size(image: (iw, ih), mark: (mark.width, mark.height), widthRatio: spec.widthRatio,
                            heightRatio: spec.heightRatio)
            if size != (mark.width, mark.height) { mark = try mark.resized(width: size.0, height: size.1) }
        }
        let (mw, mh) = (mark.width, mark.height)
        let opacity = Double(100 - spec.alpha) / 100
        var xs = positions(spec.x, image: iw, mark: mw)
        var ys = positions(spec.y, image: ih, mark: mh)
        // thumbor: tiling both ways with more than 100 tiles keeps 6 × 6.
        if xs.count * ys.count > 100, spec.x == "repeat", spec.y == "repeat" {
            xs = positions("repeat", image: iw, mark: mw, atMost: 6)
            ys = positions("repeat", image: ih, mark: mh, atMost: 6)
        }
        var out = image
        for y in ys {
            for x in xs { out.draw(mark, x: x, y: y, opacity: opacity) }
        }
        return out.converted(to: image.pixelFormat)
    }

    /// `calc_watermark_size`: the largest size within `widthRatio`/`heightRatio` percent of the image, keeping
    /// the watermark's aspect ratio.
    static func size(image: (Int, Int), mark: (Int, Int), widthRatio: Int?, heightRatio: Int?) -> (Int, Int) {
        let (mw, mh) = (Double(mark.0), Double(mark.1))
        var maxWidth = widthRatio.map { Double(image.0) * Double($0) / 100 }
        var maxHeight = heightRatio.map { Double(image.1) * Double($0) / 100 }
        if maxWidth == nil, let h = maxHeight { maxWidth = mw * h / mh }
        if maxHeight == nil, let w = maxWidth { maxHeight = mh * w / mw }
        guard let w = maxWidth, let h = maxHeight, w > 0, h > 0 else { return mark }
        if mw / w >= mh / h {
            return (max(1, Int(w.rounded(.toNearestOrEven))), max(1, Int((mh * w / mw).rounded(.toNearestOrEven))))
        }
        return (max(1, Int((mw * h / mh).rounded(.toNearestOrEven))), max(1, Int(h.rounded(.toNearestOrEven))))
    }

    /// The offsets along one axis: one for a position, several for `repeat` (thumbor's spacing).
    /// A tiled axis has at most `image` tiles (one per pixel of a 1-pixel watermark), each drawn in place.
    static func positions(_ text: String, image: Int, mark: Int, atMost limit: Int? = nil) -> [Int] {
        if text == "center" { return [(image - mark) / 2] }
        if text == "repeat" {
            var (count, rest) = image.quotientAndRemainder(dividingBy: max(mark, 1))
            if Double(image) / Double(max(mark, 1)) < 2 {
                (count, rest) = (Int((Double(image) / Double(max(mark, 1))).rounded(.up)), 10)
            }
            if let limit, count > limit { (count, rest) = (limit, image - limit * mark) }
            let space = rest / (max(count, 2) - 1)
            return (0..<count).map { $0 * space + $0 * mark }
        }
        var value = text
        let isPercent = value.hasSuffix("p")
        if isPercent { value.removeLast() }
        let negative = value.hasPrefix("-")
        guard var number = Int(value) else { return [0] }
        if isPercent {
            let magnitude = Int((Double(image) * Double(abs(number)) / 100 + 1e-5).rounded(.toNearestOrEven))
            number = negative ? -magnitude : magnitude
        }
        return [negative ? image - mark + number : number]
    }
}
