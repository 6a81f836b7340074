internal import CWebImageJXL
import Foundation
import ImageCodec

/// Partial images of a JPEG XL download: libjxl is fed each new part of the data (`JxlDecoderSetInput` with
/// the bytes it has not consumed, `JxlDecoderReleaseInput`) and renders the first frame so far on demand
/// (`JxlDecoderFlushImage`). The final image comes from the one-shot decode.
///
/// - Important: Not thread-safe (`IncrementalDecoder` drives it from one queue).
final class JXLIncrementalSession: IncrementalImageDecoding {
    private let options: DecodeOptions
    private var run: JXLDecodeRun?
    /// Bytes of the data libjxl has consumed.
    private var consumed = 0
    private var isFirstFrameComplete = false
    private var failed = false

    init(options: DecodeOptions) { self.options = options }

    func update(_ data: Data, isFinal: Bool) {
        guard !failed, !isFirstFrameComplete, data.count > consumed else { return }
        do {
            if run == nil { run = try JXLDecodeRun(limits: options.limits, pixels: true) }
            guard let run else { return }
            let stop = try data.withUnsafeBytes { raw -> JXLDecodeRun.Stop in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + consumed
                guard JxlDecoderSetInput(run.decoder, base, raw.count - consumed) == JXL_DEC_SUCCESS else {
                    throw ImageCodecError.corruptData(format: .jpegXL, message: "JxlDecoderSetInput failed")
                }
                if isFinal { JxlDecoderCloseInput(run.decoder) }
                // Released before returning: libjxl never keeps a pointer into the caller's data.
                defer { consumed = raw.count - JxlDecoderReleaseInput(run.decoder) }
                return try run.process(stopAfterFirstFrame: true)
            }
            if stop == .done { isFirstFrameComplete = true }
        } catch {
            failed = true  // limits or corrupt data: no partial images; the final decode reports the error
            run = nil
        }
    }

    func makeImage() throws -> Image? {
        guard let run, !isFirstFrameComplete else { return nil }  // complete: the final decode shows it
        guard let buffer = run.flushedCopy() else { return nil }
        var pixels = buffer.converted(to: options.pixelFormat)
        if let size = options.maxPixelSize, size > 0 { pixels = try pixels.resized(maxPixelSize: size) }
        return Image(frames: [ImageFrame(buffer: pixels)], format: .jpegXL, loopCount: 1,
                     hasAlpha: run.header?.hasAlpha ?? true, isPartial: true)
    }
}
