import Foundation

/// Decodes and composites APNG frames on demand for a lazily decoded `Image`.
///
/// Frame *i* is composited from the nearest known canvas: the canvas kept after the last frame produced (the
/// usual case for a player asking frames in order, one frame decode each), or else the last keyframe at or
/// before *i* (frame 0, or a frame covering the canvas with blend op source and a dispose op other than
/// previous).
///
/// - Important: Thread-safe: the canvas state sits in a `Mutex`, and frames are produced under it.
final class APNGFrameSource: ImageFrameSource {
    private struct State {
        /// The canvas before frame `nextIndex` is drawn (after the previous frame's disposal).
        var canvas: PixelBuffer?
        var nextIndex = 0
    }

    private let data: Data
    private let container: APNGContainer
    /// The pixel format frames are decoded and composited in (other formats are converted on the way out).
    private let workingFormat: PixelBuffer.PixelFormat
    private let state = Mutex(State())

    /// The colour stage for every output frame (the file's iCCP/sRGB/cICP/gAMA), run outside the lock.
    private let conversion: ColorConversion

    init(data: Data, container: APNGContainer, workingFormat: PixelBuffer.PixelFormat,
         conversion: ColorConversion = ColorConversion(colorSpace: nil, management: .sRGB)) {
        self.data = data
        self.container = container
        self.workingFormat = workingFormat
        self.conversion = conversion
    }

    var frameCount: Int { container.frames.count }

    func duration(at index: Int) -> Double {
        ImageFrame.displayDuration(forStoredDelay: container.frames[index].control.storedDelay)
    }

    func decodeFrame(at index: Int, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        guard index >= 0, index < frameCount else {
            throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: frameCount)
        }
        let output = try state.withLock { state in try _render(index, state: &state) }
        var frame = output.converted(to: pixelFormat)
        conversion.apply(to: &frame)
        return frame
    }

    /// Produces frame `index` in `workingFormat`; the lock is held.
    private func _render(_ index: Int, state: inout State) throws -> PixelBuffer {
        let (width, height) = (container.canvasWidth, container.canvasHeight)
        var start = 0
        for k in stride(from: index, through: 1, by: -1) {
            let control = container.frames[k].control
            // A keyframe's output ignores the canvas before it; its disposal must too (not "previous").
            if control.blend == .source, control.dispose != .previous, control.coversCanvas(width: width, height: height) {
                start = k
                break
            }
        }
        var canvas: PixelBuffer
        if let kept = state.canvas, state.nextIndex <= index, state.nextIndex >= start {
            canvas = kept
            start = state.nextIndex
        } else {
            canvas = try PixelBuffer(width: width, height: height, pixelFormat: workingFormat)
        }
        state.canvas = nil  // release the shared reference so the canvas is mutated without a copy
        var output: PixelBuffer?
        try data.withUnsafeBytes { bytes in
            for j in start...index {
                let control = container.frames[j].control
                let png = try container.standalonePNG(frame: j, from: bytes)
                let options = DecodeOptions(limits: .none, pixelFormat: workingFormat)
                let (frame, _) = try PNGDecoder.decodeBuffer(png, format: .apng, options: options)
                guard frame.width == control.width, frame.height == control.height else {
                    throw ImageCodecError.corruptData(format: .apng, message: "frame \(j) size differs from its fcTL")
                }
                // The first frame's "previous" means clearing to the initial (transparent) canvas.
                let dispose: APNGFrameControl.Dispose = (j == 0 && control.dispose == .previous) ? .background : control.dispose
                let saved = dispose == .previous ? try APNGCompositor.copyRect(canvas, control: control) : nil
                APNGCompositor.blend(frame, onto: &canvas, control: control)
                if j == index { output = canvas }
                switch dispose {
                case .none: break
                case .background: APNGCompositor.clear(&canvas, control: control)
                case .previous: if let saved { APNGCompositor.restore(saved, into: &canvas, control: control) }
                }
            }
        }
        state.canvas = canvas
        state.nextIndex = index + 1
        guard let output else { throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: frameCount) }
        return output
    }
}
