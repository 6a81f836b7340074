internal import CWebImageWebP
import Foundation

/// A `WebPAnimDecoder` with the bytes it reads (libwebp requires them to stay put while the decoder lives).
///
/// - Important: Not thread-safe; owned by one decode or by `WebPAnimationSource` under its lock.
final class WebPAnimDecoderHandle {
    private let bytes: UnsafeMutableRawBufferPointer
    private let decoder: OpaquePointer
    let canvasWidth: Int
    let canvasHeight: Int
    /// Index of the frame the next `decodeNext` returns.
    private(set) var next = 0

    /// Wraps `WebPAnimDecoderNew`. The caller has checked the canvas size and frame count against the limits
    /// (the decoder allocates two canvases).
    init(data: Data, premultiplied: Bool) throws {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        _ = data.copyBytes(to: copy)
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            copy.deallocate()
            throw ImageCodecError.corruptData(format: .webp, message: "libwebp version mismatch")
        }
        options.color_mode = premultiplied ? MODE_rgbA : MODE_RGBA
        options.use_threads = 0
        var webpData = WebPData(bytes: copy.baseAddress!.assumingMemoryBound(to: UInt8.self), size: data.count)
        guard let decoder = WebPAnimDecoderNew(&webpData, &options) else {
            copy.deallocate()
            throw ImageCodecError.corruptData(format: .webp, message: "WebPAnimDecoderNew failed")
        }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else {
            WebPAnimDecoderDelete(decoder)
            copy.deallocate()
            throw ImageCodecError.corruptData(format: .webp, message: "WebPAnimDecoderGetInfo failed")
        }
        self.bytes = copy
        self.decoder = decoder
        self.canvasWidth = Int(info.canvas_width)
        self.canvasHeight = Int(info.canvas_height)
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
        bytes.deallocate()
    }

    /// Restarts at frame 0. Wraps `WebPAnimDecoderReset`.
    func reset() {
        WebPAnimDecoderReset(decoder)
        next = 0
    }

    /// Composites the next frame (libwebp blends and disposes) and copies it into a new buffer when `copy`.
    /// Wraps `WebPAnimDecoderGetNext`.
    func decodeNext(copy: Bool, format: PixelBuffer.PixelFormat) throws -> PixelBuffer? {
        var pixels: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &pixels, &timestamp) != 0, let pixels else {
            throw ImageCodecError.corruptData(format: .webp, message: "WebPAnimDecoderGetNext failed at frame \(next)")
        }
        next += 1
        guard copy else { return nil }
        var out = try PixelBuffer(width: canvasWidth, height: canvasHeight, pixelFormat: format)
        out.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: pixels, byteCount: $0.count) }
        return out
    }
}

/// Decodes the frames of an animated WebP on demand (YYImage's lazy frames).
///
/// `WebPAnimDecoder` is sequential: the source keeps it positioned after the last frame it produced, so
/// playing forward costs one frame each; going back resets it and composites forward from frame 0.
///
/// - Important: Thread-safe; one lock serialises decoding.
final class WebPAnimationSource: ImageFrameSource {
    private struct State {
        var decoder: WebPAnimDecoderHandle
        var premultiplied: Bool
    }

    private let data: Data
    private let durations: [Double]
    private let state: Mutex<State>
    /// The colour stage for every frame (the file's `ICCP`), run outside the lock.
    private let conversion: ColorConversion

    init(data: Data, durations: [Double], decoder: sending WebPAnimDecoderHandle, premultiplied: Bool,
         conversion: ColorConversion) {
        self.data = data
        self.durations = durations
        self.conversion = conversion
        self.state = Mutex(State(decoder: decoder, premultiplied: premultiplied))
    }

    var frameCount: Int { durations.count }

    func duration(at index: Int) -> Double { durations[index] }

    func decodeFrame(at index: Int, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        guard index >= 0, index < durations.count else {
            throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: durations.count)
        }
        var frame = try state.withLock { state in
            let premultiplied = pixelFormat == .rgba8Premultiplied
            if premultiplied != state.premultiplied {
                state.decoder = try WebPAnimDecoderHandle(data: data, premultiplied: premultiplied)
                state.premultiplied = premultiplied
            } else if index < state.decoder.next {
                state.decoder.reset()
            }
            do {
                while state.decoder.next < index { _ = try state.decoder.decodeNext(copy: false, format: pixelFormat) }
                guard let frame = try state.decoder.decodeNext(copy: true, format: pixelFormat) else {
                    throw ImageCodecError.corruptData(format: .webp, message: "no frame \(index)")
                }
                return frame
            } catch {
                state.decoder.reset()
                throw error
            }
        }
        conversion.apply(to: &frame)
        return frame
    }
}
