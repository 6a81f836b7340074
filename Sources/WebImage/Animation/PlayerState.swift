import Dispatch
import ImageCodec

/// A buffered frame: decoded, or known to fail (so the worker does not retry it every tick).
enum BufferedFrame {
    case decoded(PixelBuffer)
    case failed
}

/// Everything an `AnimatedImagePlayer` knows, guarded by its mutex. Not thread-safe by itself.
struct PlayerState: ~Copyable {
    var image: (any AnimatedImage)?
    var frameCount = 0
    var loopCount = 0
    var bytesPerFrame = 0
    /// Each frame's stored duration and contents rect, read from the image when it is set (outside the lock:
    /// the image is the caller's code and must never run under the player's lock).
    var durations: [Double] = []
    var contentsRects: [PixelRect?] = []

    var currentIndex = 0
    var currentBuffer: PixelBuffer?
    var currentRect: PixelRect?
    /// Time spent on the current frame, in seconds.
    var time: Double = 0
    var loop = 0
    var loopEnded = false
    var bufferMiss = false

    var buffer: [Int: BufferedFrame] = [:]
    /// YYAnimatedImageView's `_incrBufferCount`: how many frames the next fetch may decode. Grows by one per
    /// fetch (gradual growth); set negative by memory pressure so it takes 1–3 s of ticks to grow back.
    var incrementalBufferCount = 0
    var maxBufferCount = 1
    var maxBufferSize = 0
    /// Bumped to cancel fetches in flight (jump, replace, memory pressure).
    var generation = 0
    var isFetching = false

    var isPlaying = false
    var runsAutomatically = true
    var framesPerSecond = 60
    var timer: TickerTimer?
    var lastTick: UInt64 = 0

    var onFrameChange: (@Sendable (AnimatedImagePlayer.Frame) -> Void)?
    var onLoopEnd: (@Sendable () -> Void)?

    /// Duration of frame `index` after the browsers' rule.
    func duration(at index: Int) -> Double {
        guard durations.indices.contains(index) else { return 0 }
        return ImageFrame.displayDuration(forStoredDelay: durations[index])
    }

    /// The contents rect of frame `index` (nil: the whole bitmap).
    func contentsRect(at index: Int) -> PixelRect? {
        contentsRects.indices.contains(index) ? contentsRects[index] : nil
    }

    /// min(20% of total memory, 60% of available): reads `/proc` and cgroup files, so call it outside the lock.
    static func memoryBudget() -> Int64 {
        min(SystemMemory.totalBytes / 5, SystemMemory.availableBytes * 3 / 5)
    }

    /// YYAnimatedImageView's `calcMaxBufferCount`: `memoryBudget` (from `memoryBudget()`), at least
    /// 10 MB, capped by `maxBufferSize`, divided by the frame size and clamped to 1…512.
    func computeMaxBufferCount(memoryBudget: Int64) -> Int {
        let bytes = Int64(bytesPerFrame > 0 ? bytesPerFrame : 1024)
        var limit = max(memoryBudget, AnimatedImagePlayer.minimumBufferBytes)
        if maxBufferSize > 0 { limit = min(limit, Int64(maxBufferSize)) }
        let count = limit / bytes
        return Int(min(max(count, 1), Int64(AnimatedImagePlayer.maxBufferCountLimit)))
    }
}

/// The player's `DispatchSourceTimer`.
///
/// `@unchecked Sendable`: dispatch sources are thread-safe objects (resume and cancel may be called from any
/// thread); the wrapper only lets the timer live in the mutex-guarded state.
final class TickerTimer: @unchecked Sendable {
    let source: DispatchSourceTimer
    init(_ source: DispatchSourceTimer) { self.source = source }
    func cancel() { source.cancel() }
}
