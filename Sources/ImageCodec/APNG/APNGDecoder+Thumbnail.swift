import Foundation

extension APNGDecoder {
    /// The still thumbnail of an animation whose canvas is larger than the thumbnail: its first frame decoded
    /// at its own size (a standalone PNG, straight RGBA8) and placed on a transparent canvas that is never
    /// allocated (`FirstFrameThumbnail`). On the initial transparent canvas both blend ops give the frame
    /// itself, and its dispose op does not matter. Limits apply to what is allocated: the thumbnail and the
    /// first frame; the canvas, to `DownsamplePlan`'s work cap.
    static func decodeAnimationThumbnail(_ data: Data, container: APNGContainer, plan: DownsamplePlan,
                                         options: DecodeOptions) throws -> Image {
        try plan.check(options.limits)
        let control = container.frames[0].control
        try options.limits.check(width: control.width, height: control.height)
        let frame = try data.withUnsafeBytes { bytes -> PixelBuffer in
            let png = try container.standalonePNG(frame: 0, from: bytes)
            let (frame, _) = try PNGDecoder.decodeBuffer(png, format: .apng,
                                                         options: DecodeOptions(limits: options.limits, pixelFormat: .rgba8))
            guard frame.width == control.width, frame.height == control.height else {
                throw ImageCodecError.corruptData(format: .apng, message: "frame 0 size differs from its fcTL")
            }
            return frame
        }
        let buffer = try FirstFrameThumbnail.make(frame: frame, x: control.x, y: control.y, plan: plan,
                                                  limits: options.limits, format: options.pixelFormat)
        return Image(frames: [ImageFrame(buffer: buffer)], format: .apng, loopCount: 1, hasAlpha: container.hasAlpha,
                     isProgressive: container.isInterlaced, originalData: options.keepsOriginalData ? data : nil)
    }
}
