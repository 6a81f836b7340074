internal import CWebImageJXL
import Foundation
import ImageCodec

/// The facts of `JXL_DEC_BASIC_INFO`, oriented.
struct JXLHeader {
    /// Displayed size (libjxl applies the orientation; `xsize`/`ysize` are swapped for orientations 5–8).
    var width: Int, height: Int
    var hasAlpha: Bool
    var isAnimation: Bool
    /// `num_loops` (0 = forever).
    var loopCount: Int
    /// Seconds per tick (`tps_denominator / tps_numerator`), 0 for a still.
    var secondsPerTick: Double

    init(_ info: JxlBasicInfo) {
        let swaps = info.orientation.rawValue >= JXL_ORIENT_TRANSPOSE.rawValue
        width = Int(swaps ? info.ysize : info.xsize)
        height = Int(swaps ? info.xsize : info.ysize)
        hasAlpha = info.alpha_bits > 0
        isAnimation = info.have_animation != 0
        loopCount = Int(info.animation.num_loops)
        secondsPerTick = info.have_animation != 0 && info.animation.tps_numerator > 0
            ? Double(info.animation.tps_denominator) / Double(info.animation.tps_numerator) : 0
    }
}

/// One libjxl decoder (`JxlDecoderCreate` … `JxlDecoderDestroy`) and the event loop both the one-shot
/// decode and the incremental session drive (`JxlDecoderProcessInput`).
///
/// - Important: Not thread-safe; one owner. The pixel buffer libjxl writes into is owned here
///   (`JxlDecoderSetImageOutBuffer` keeps its address until `JXL_DEC_FULL_IMAGE`).
final class JXLDecodeRun {
    let decoder: OpaquePointer
    let limits: DecodeLimits
    private(set) var header: JXLHeader?
    /// Completed frames (straight RGBA8).
    private(set) var frames: [PixelBuffer] = []
    /// Display durations of the frames whose header was read.
    private(set) var durations: [Double] = []
    /// The frame libjxl is writing into.
    private(set) var current: PixelBuffer?
    private let pixels: Bool
    /// What to do with colour (`JXLColor.negotiate`); `nil` leaves libjxl's defaults (no colour event).
    private let colorManagement: ColorManagement?
    /// What the file said about its colours (after `JXL_DEC_COLOR_ENCODING`).
    private(set) var originalColorSpace: ImageColorSpace?
    /// What the decoded pixels are in (after `JXL_DEC_COLOR_ENCODING`): the colour stage's input.
    private(set) var dataColorSpace: ImageColorSpace?
    private var basicInfo = JxlBasicInfo()
    private var pixelFormat = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)

    /// How a run of `JxlDecoderProcessInput` stopped.
    enum Stop { case done, needsMoreInput }

    /// - Parameter pixels: decode pixels (`JXL_DEC_FULL_IMAGE`) or headers only.
    /// - Parameter colorManagement: negotiate the output colour space (`JXLColor`); `nil` keeps libjxl's.
    init(limits: DecodeLimits, pixels: Bool, colorManagement: ColorManagement? = nil) throws {
        guard let decoder = JxlDecoderCreate(nil) else { throw ImageCodecError.allocationFailed(byteCount: 0) }
        self.decoder = decoder
        self.limits = limits
        self.pixels = pixels
        self.colorManagement = colorManagement
        var events = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_FRAME.rawValue)
        if pixels { events |= Int32(JXL_DEC_FULL_IMAGE.rawValue) }
        if pixels, colorManagement != nil { events |= Int32(JXL_DEC_COLOR_ENCODING.rawValue) }
        guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
              JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE) == JXL_DEC_SUCCESS else {
            JxlDecoderDestroy(decoder)
            throw ImageCodecError.corruptData(format: .jpegXL, message: "libjxl refused the decoder settings")
        }
    }

    deinit { JxlDecoderDestroy(decoder) }

    /// Decodes complete `data` (all frames, or the first).
    static func run(_ data: Data, limits: DecodeLimits, pixels: Bool, firstFrameOnly: Bool,
                    colorManagement: ColorManagement? = nil) throws -> JXLDecodeRun {
        let run = try JXLDecodeRun(limits: limits, pixels: pixels, colorManagement: colorManagement)
        let stop = try data.withUnsafeBytes { raw -> Stop in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw ImageCodecError.emptyData }
            guard JxlDecoderSetInput(run.decoder, base, raw.count) == JXL_DEC_SUCCESS else {
                throw ImageCodecError.corruptData(format: .jpegXL, message: "JxlDecoderSetInput failed")
            }
            // The input is not closed (`JxlDecoderCloseInput`): once closed, libjxl 0.7 reports data that ends
            // too early as JXL_DEC_ERROR, like corrupt data. Left open, it asks for more
            // (JXL_DEC_NEED_MORE_INPUT), which is reported as `.truncated`; a complete file still ends with
            // JXL_DEC_SUCCESS (the last frame header says it is the last; no `JXL_DEC_BOX` events are used).
            defer { _ = JxlDecoderReleaseInput(run.decoder) }
            return try run.process(stopAfterFirstFrame: firstFrameOnly)
        }
        if stop == .needsMoreInput { throw ImageCodecError.truncated(format: .jpegXL) }
        return run
    }

    /// Runs libjxl's event loop over the input set, until it needs more input, the image ends, or (with
    /// `stopAfterFirstFrame`) the first frame is complete.
    ///
    /// - Throws: `ImageCodecError.limitExceeded` from the basic info or a frame header, before libjxl allocates
    ///   for it; `.corruptData` on `JXL_DEC_ERROR`.
    func process(stopAfterFirstFrame: Bool) throws -> Stop {
        while true {
            switch JxlDecoderProcessInput(decoder) {
            case JXL_DEC_BASIC_INFO:
                var info = JxlBasicInfo()
                guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else { throw corrupt("no basic info") }
                let header = JXLHeader(info)
                // Before libjxl allocates anything for the frames: it aborts the process on allocation failure.
                try limits.check(width: header.width, height: header.height)
                self.header = header
                basicInfo = info
            case JXL_DEC_COLOR_ENCODING:
                if let colorManagement {
                    (originalColorSpace, dataColorSpace) = JXLColor.negotiate(decoder, info: basicInfo, management: colorManagement)
                }
            case JXL_DEC_FRAME:
                guard let header else { throw corrupt("frame before basic info") }
                if stopAfterFirstFrame && !durations.isEmpty { return .done }
                var frameHeader = JxlFrameHeader()
                guard JxlDecoderGetFrameHeader(decoder, &frameHeader) == JXL_DEC_SUCCESS else { throw corrupt("no frame header") }
                try limits.check(width: header.width, height: header.height, frameCount: durations.count + 1)
                durations.append(ImageFrame.displayDuration(forStoredDelay: Double(frameHeader.duration) * header.secondsPerTick))
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                try setOutputBuffer()
            case JXL_DEC_FULL_IMAGE:
                if let current { frames.append(current) }
                current = nil
                if stopAfterFirstFrame { return .done }
            case JXL_DEC_SUCCESS:
                return .done
            case JXL_DEC_NEED_MORE_INPUT:
                return .needsMoreInput
            case JXL_DEC_ERROR:
                throw corrupt("JxlDecoderProcessInput failed")
            default:
                continue  // events not subscribed to are not reported; anything else needs no action
            }
        }
    }

    /// A canvas-sized buffer for the next frame, checked against libjxl's own size.
    private func setOutputBuffer() throws {
        guard let header else { throw corrupt("no basic info before the image") }
        var size = 0
        guard JxlDecoderImageOutBufferSize(decoder, &pixelFormat, &size) == JXL_DEC_SUCCESS else { throw corrupt("no output size") }
        var buffer = try PixelBuffer(width: header.width, height: header.height, pixelFormat: .rgba8)
        guard size == buffer.byteCount else { throw corrupt("output size \(size) is not \(header.width)×\(header.height)×4") }
        // The storage stays alive (and unshared) in `current` until JXL_DEC_FULL_IMAGE, so the address holds.
        let status = buffer.withUnsafeMutableBytes { raw in
            JxlDecoderSetImageOutBuffer(decoder, &pixelFormat, raw.baseAddress, raw.count)
        }
        guard status == JXL_DEC_SUCCESS else { throw corrupt("JxlDecoderSetImageOutBuffer failed") }
        current = buffer
    }

    /// The completed frames, handed over (the run keeps none, so they can be converted in place).
    func takeFrames() -> [PixelBuffer] {
        defer { frames = [] }
        return frames
    }

    /// A copy of what libjxl has rendered of the current frame so far (`JxlDecoderFlushImage`), or `nil`.
    func flushedCopy() -> PixelBuffer? {
        guard let current, JxlDecoderFlushImage(decoder) == JXL_DEC_SUCCESS else { return nil }
        // A copy: libjxl keeps writing into `current`, and an image handed out must not change.
        return current.withUnsafeBytes { raw in
            do { return try PixelBuffer(width: current.width, height: current.height, pixelFormat: .rgba8, bytes: Array(raw)) } catch {
                return nil  // allocation failed: no partial image this time
            }
        }
    }

    private func corrupt(_ message: String) -> ImageCodecError { .corruptData(format: .jpegXL, message: "libjxl: \(message)") }
}
