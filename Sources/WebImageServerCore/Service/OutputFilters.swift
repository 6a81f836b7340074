import Foundation
import ImageCodec

/// Runs one `OutputFilter` on a shaped output, with thumbor's sizes.
///
/// - Important: Stateless; thread-safe.
enum OutputFilters {
    /// `image` after `filter`; `box` is the requested box after the plan's adjustments (0 where no side was
    /// asked for).
    /// `watermarks` holds the decoded watermark of each `watermark` filter, by its URL.
    static func apply(_ filter: OutputFilter, to image: PixelBuffer, box: (width: Int, height: Int),
                      watermarks: [String: PixelBuffer] = [:]) throws -> PixelBuffer {
        switch filter {
        case .blur(let sigma):
            return try image.blurred(radius: sigma)
        case .fill(let style, let blends):
            // thumbor's box here: the requested side, or the image's own where none was asked for, never under
            // the image (`fit_in_resize` sets the request to the larger of the two).
            let width = box.width == 0 ? image.width : max(box.width, image.width)
            let height = box.height == 0 ? image.height : max(box.height, image.height)
            let background: PixelBuffer
            switch style {
            case .color(let color):
                background = try PixelBuffer.solid(width: width, height: height, color: color, pixelFormat: image.pixelFormat)
            case .auto:
                background = try PixelBuffer.solid(width: width, height: height, color: image.meanColor(),
                                                   pixelFormat: image.pixelFormat)
            case .blur:
                // thumbor: the image blurred by its 50-pixel kernel (σ 50 truncated at 1σ), stretched to the box.
                background = try image.blurred(radius: ThumborBlur.effectiveSigma(radius: 50, sigma: 0))
                    .resized(width: width, height: height)
            }
            return background.drawing(image, x: (width - image.width) / 2, y: (height - image.height) / 2, blendsAlpha: blends)
        case .backgroundColor(let color):
            return try image.composited(over: color)
        case .upscale:
            // thumbor's `upscale()`: only when smaller than the box on both sides; sizes truncated.
            let (tw, th) = box
            guard tw > 0, th > 0, image.width < tw, image.height < th else { return image }
            let (sw, sh) = (image.width, image.height)
            let size = Double(sw) / Double(tw) >= Double(sh) / Double(th)
                ? (tw, max(1, sh * tw / sw)) : (max(1, sw * th / sh), th)
            return try image.resized(width: size.0, height: size.1)
        case .proportion(let factor):
            let (w, h) = (Int(Double(image.width) * factor), Int(Double(image.height) * factor))
            guard w >= 1, h >= 1, (w, h) != (image.width, image.height) else { return image }
            return try image.resized(width: w, height: h)
        case .grayscale:
            return image.grayscaled()
        case .rotate(let degrees):
            // thumbor turns counter-clockwise (PIL's `ROTATE_90`).
            switch degrees {
            case 90: return try image.rotated(by: .clockwise270)
            case 180: return try image.rotated(by: .clockwise180)
            case 270: return try image.rotated(by: .clockwise90)
            default: return image
            }
        case .roundCorner(let a, let b, let color, let transparent):
            return image.roundingCorners(a: a, b: b, color: color, transparent: transparent)
        case .sharpen(let amount, let radius, let luminanceOnly):
            // thumbor's own wavelet sharpen, for its pixels (an unsharp mask came out SSIMULACRA2 40 from them).
            guard amount.isFinite, radius.isFinite else { return image }
            return try ThumborSharpen.apply(to: image, amount: amount, radius: radius, luminanceOnly: luminanceOnly)
        case .brightness(let percent):
            return image.adjustingBrightness(percent: percent)
        case .contrast(let percent):
            return image.adjustingContrast(percent: percent)
        case .rgb(let red, let green, let blue):
            return image.addingRGB(red: red, green: green, blue: blue)
        case .watermark(let spec):
            let key = URL(string: spec.url)?.absoluteString ?? spec.url
            guard let mark = watermarks[key] else {
                throw ImageServiceError.internalFailure("watermark \(spec.url.prefix(80)) was not loaded")
            }
            return try ThumborWatermarkDrawing.draw(mark, on: image, spec: spec)
        }
    }
}
