internal import CWebImageWebP
import Foundation

/// Header facts of a WebP file read through libwebp's demuxer (no pixel decoding).
struct WebPContainer {
    var width: Int
    var height: Int
    var frameCount: Int
    /// ANIM loop count (total plays, 0 = forever); `nil` for a still image.
    var storedLoopCount: Int?
    var hasAlpha: Bool
    var isAnimated: Bool
    /// Each frame's stored duration in milliseconds (`[0]` for a still image).
    var durationsMilliseconds: [Int]

    /// Display durations with the browsers' rule (`[0]` for a still image).
    var durations: [Double] {
        guard isAnimated else { return [0] }
        return durationsMilliseconds.map { ImageFrame.displayDuration(forStoredDelay: Double($0) / 1000) }
    }

    /// Parses the container. Wraps `WebPGetFeatures` and, for animations, `WebPDemux` / `WebPDemuxGetFrame`.
    ///
    /// - Throws: `.truncated` or `.corruptData` with libwebp's status.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws -> WebPContainer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw ImageCodecError.emptyData
        }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw error(status) }
        if features.has_animation == 0 {
            return WebPContainer(width: Int(features.width), height: Int(features.height), frameCount: 1,
                                 storedLoopCount: nil, hasAlpha: features.has_alpha != 0, isAnimated: false,
                                 durationsMilliseconds: [0])
        }
        var webpData = WebPData(bytes: base, size: bytes.count)
        guard let demux = WebPDemux(&webpData) else {
            throw ImageCodecError.corruptData(format: .webp, message: "WebPDemux could not parse the animation")
        }
        defer { WebPDemuxDelete(demux) }
        let count = Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT))
        let flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS)
        var durations: [Int] = []
        durations.reserveCapacity(min(count, 100_000))
        var iterator = WebPIterator()
        if WebPDemuxGetFrame(demux, 1, &iterator) != 0 {
            repeat { durations.append(Int(iterator.duration)) } while WebPDemuxNextFrame(&iterator) != 0
            WebPDemuxReleaseIterator(&iterator)
        }
        guard count > 0, durations.count == count else {
            throw ImageCodecError.corruptData(format: .webp, message: "animation has \(count) frames but \(durations.count) readable")
        }
        return WebPContainer(width: Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH)),
                             height: Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT)),
                             frameCount: count,
                             storedLoopCount: Int(WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT)),
                             hasAlpha: flags & ALPHA_FLAG.rawValue != 0 || features.has_alpha != 0,
                             isAnimated: true, durationsMilliseconds: durations)
    }

    /// The error for a libwebp status code.
    static func error(_ status: VP8StatusCode) -> ImageCodecError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: return .truncated(format: .webp)
        case VP8_STATUS_OUT_OF_MEMORY: return .corruptData(format: .webp, message: "out of memory")
        case VP8_STATUS_INVALID_PARAM: return .corruptData(format: .webp, message: "invalid parameter")
        case VP8_STATUS_BITSTREAM_ERROR: return .corruptData(format: .webp, message: "bitstream error")
        case VP8_STATUS_UNSUPPORTED_FEATURE: return .corruptData(format: .webp, message: "unsupported feature")
        case VP8_STATUS_SUSPENDED: return .truncated(format: .webp)
        case VP8_STATUS_USER_ABORT: return .corruptData(format: .webp, message: "aborted")
        default: return .corruptData(format: .webp, message: "libwebp status \(status.rawValue)")
        }
    }
}
