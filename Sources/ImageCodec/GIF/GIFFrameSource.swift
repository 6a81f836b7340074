internal import CWebImageGIF
import Foundation

/// Decodes the frames of a GIF animation on demand (YYImage's lazy frames), compositing each one onto a
/// cached canvas.
///
/// Random access: the source keeps the canvas ready for the next frame (`next`). Asking for frame `j ≥ next`
/// composites forward from there; otherwise (or when a closer starting point lies between) it restarts from
/// the latest starting point at or before `j`:
/// - a keyframe: frame 0, or a frame whose predecessor is disposed to background over the whole canvas, so
///   its starting canvas is known to be transparent;
/// - a snapshot: every `snapshotInterval`-th frame's starting canvas, kept (copy-on-write) the first time
///   compositing passes it, while the snapshots fit in `snapshotBudget` bytes.
/// So a random frame costs at most `snapshotInterval` frame decodes once the animation has been played through.
///
/// - Important: Thread-safe: one lock serialises decoding (a GIF is decoded record by record, so two frames
///   cannot be composited at once from one canvas anyway).
final class GIFFrameSource: ImageFrameSource {
    private struct State {
        var canvas: GIFCanvas
        /// The frame the canvas is ready to receive (disposal of `next - 1` already applied).
        var next: Int
        /// Starting canvases of every `snapshotInterval`-th frame, by frame index.
        var snapshots: [Int: PixelBuffer] = [:]
    }

    /// Frames between snapshots of the starting canvas.
    static let snapshotInterval = 8
    /// Most bytes of snapshots one animation keeps (32 MiB).
    static let snapshotBudget = 32 << 20

    private let data: Data
    private let frames: [GIFFrameInfo]
    private let keyframes: [Int]
    private let state: Mutex<State>

    /// - Parameters:
    ///   - canvas: the canvas ready for frame `next` (e.g. after frame 0 and its disposal).
    init(data: Data, frames: [GIFFrameInfo], canvas: GIFCanvas, next: Int) {
        self.data = data
        self.frames = frames
        var keys = [0]
        for i in frames.indices.dropFirst() {
            let previous = frames[i - 1]
            if previous.disposal == 2, previous.left == 0, previous.top == 0,
               previous.width >= canvas.width, previous.height >= canvas.height {
                keys.append(i)
            }
        }
        self.keyframes = keys
        self.state = Mutex(State(canvas: canvas, next: next))
    }

    var frameCount: Int { frames.count }

    func duration(at index: Int) -> Double { frames[index].duration }

    func decodeFrame(at index: Int, pixelFormat: PixelBuffer.PixelFormat) throws -> PixelBuffer {
        guard index >= 0, index < frames.count else {
            throw ImageCodecError.frameIndexOutOfRange(index: index, frameCount: frames.count)
        }
        return try state.withLock { state in
            let keyframe = keyframes.last { $0 <= index } ?? 0
            let snapshot = state.snapshots.keys.filter { $0 <= index && $0 > keyframe }.max()
            let start = snapshot ?? keyframe
            if index < state.next || start > state.next {
                if let snapshot, let pixels = state.snapshots[snapshot] {
                    state.canvas.restore(pixels)
                } else {
                    try state.canvas.clear()
                }
                state.next = start
            }
            let frameBytes = state.canvas.pixels.byteCount
            let maxSnapshots = Self.snapshotBudget / max(frameBytes, 1)
            do {
                return try data.withUnsafeBytes { bytes in
                    try GIFReader.withHandle(bytes) { gif, input in
                        var output: PixelBuffer?
                        for i in state.next...index {
                            let frame = frames[i]
                            input.pointee.offset = frame.recordOffset
                            var record = UNDEFINED_RECORD_TYPE
                            guard DGifGetRecordType(gif, &record) != GIF_ERROR, record == IMAGE_DESC_RECORD_TYPE,
                                  DGifGetImageDesc(gif) != GIF_ERROR else { throw GIFReader.error(gif) }
                            if i > 0, i % Self.snapshotInterval == 0, state.snapshots[i] == nil,
                               state.snapshots.count < maxSnapshots {
                                state.snapshots[i] = state.canvas.pixels
                            }
                            try state.canvas.draw(frame, from: gif)
                            if i == index { output = try state.canvas.snapshot(pixelFormat) }
                            try state.canvas.dispose(frame)
                            state.next = i + 1
                        }
                        guard let output else { throw ImageCodecError.corruptData(format: .gif, message: "frame \(index) not reached") }
                        return output
                    }
                }
            } catch {
                // A half-drawn canvas must not be continued from: the next call restarts from a keyframe or snapshot.
                state.next = Int.max
                throw error
            }
        }
    }
}
