internal import CWebImageWebP
import Foundation

extension WebPDecoder {
    /// The still thumbnail of an animation whose canvas is larger than the thumbnail: its first frame decoded
    /// at its own size (`WebPDemuxGetFrame`, then `WebPDecode` of the frame's bitstream) and placed on a
    /// transparent canvas that is never allocated (`FirstFrameThumbnail`); `WebPAnimDecoder`, which allocates
    /// two canvases, is not used. Limits apply to what is allocated: the thumbnail and the first frame; the
    /// canvas, to `DownsamplePlan`'s work cap.
    static func decodeAnimationThumbnail(_ data: Data, container: WebPContainer, plan: DownsamplePlan,
                                         options: DecodeOptions) throws -> Image {
        try plan.check(options.limits)
        let (frame, x, y) = try data.withUnsafeBytes { try decodeFirstFrame($0, limits: options.limits) }
        let buffer = try FirstFrameThumbnail.make(frame: frame, x: x, y: y, plan: plan, limits: options.limits,
                                                  format: options.pixelFormat)
        return Image(frames: [ImageFrame(buffer: buffer)], format: .webp, loopCount: 1,
                     storedLoopCount: container.storedLoopCount, hasAlpha: container.hasAlpha,
                     originalData: options.keepsOriginalData ? data : nil)
    }

    /// The first frame of an animation, straight RGBA8 at its own size, and its offset on the canvas.
    /// Wraps `WebPDemux`, `WebPDemuxGetFrame` and `WebPGetFeatures`.
    private static func decodeFirstFrame(_ bytes: UnsafeRawBufferPointer,
                                         limits: DecodeLimits) throws -> (PixelBuffer, x: Int, y: Int) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw ImageCodecError.emptyData
        }
        var webpData = WebPData(bytes: base, size: bytes.count)
        guard let demux = WebPDemux(&webpData) else {
            throw ImageCodecError.corruptData(format: .webp, message: "WebPDemux could not parse the animation")
        }
        defer { WebPDemuxDelete(demux) }
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else {
            throw ImageCodecError.corruptData(format: .webp, message: "no first frame")
        }
        defer { WebPDemuxReleaseIterator(&iterator) }
        let (width, height) = (Int(iterator.width), Int(iterator.height))
        try limits.check(width: width, height: height)
        guard let fragment = iterator.fragment.bytes, iterator.fragment.size > 0 else {
            throw ImageCodecError.corruptData(format: .webp, message: "empty first frame")
        }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(fragment, iterator.fragment.size, &features)
        guard status == VP8_STATUS_OK else { throw WebPContainer.error(status) }
        guard Int(features.width) == width, Int(features.height) == height else {
            throw ImageCodecError.corruptData(format: .webp, message: "first frame size differs from its ANMF")
        }
        let frame = try decodeStill(UnsafeRawBufferPointer(start: fragment, count: iterator.fragment.size),
                                    width: width, height: height, isScaled: false, format: .rgba8)
        return (frame, Int(iterator.x_offset), Int(iterator.y_offset))
    }
}
