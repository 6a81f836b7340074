import Dispatch
import Foundation
import ImageCodec
import Synchronization

/// Plays an `AnimatedImage` (GIF, APNG, animated WebP, a sprite sheet, or your own type) for any renderer:
/// YYAnimatedImageView without a view.
///
/// ```swift
/// let player = AnimatedImagePlayer(image: gif)
/// player.onFrameChange = { frame in renderer.show(frame.buffer, cell: frame.contentsRect) }
/// player.play()          // ticks at 60 Hz on its own timer; or set preferredFramesPerSecond = 0 and call step(by:)
/// ```
///
/// Frames are decoded ahead on one serial background worker into a buffer whose size comes from memory
/// (`maxBufferCount`); the buffer grows gradually after start, drops to one frame on `handleMemoryPressure()`
/// and grows back within 1–3 s. A frame that is not buffered when due is held (the current frame stays) and
/// retried on the next tick; time never skips a frame.
///
/// - Important: Thread-safe: every method and property may be used from any thread. `onFrameChange` and
///   `onLoopEnd` run on `deliveryQueue`, in order.
public final class AnimatedImagePlayer: Sendable {
    /// A frame to show.
    public struct Frame: Sendable {
        /// Which frame of the image.
        public let index: Int
        /// Its pixels.
        public let buffer: PixelBuffer
        /// The part of `buffer` to show (sprite sheets); `nil` for the whole bitmap.
        public let contentsRect: PixelRect?
    }

    /// The most frames the buffer ever holds (YYAnimatedImageView's `MAX_BUFFER_COUNT`).
    public static let maxBufferCountLimit = 512
    /// The least buffer memory the automatic size allows: 10 MB (YYAnimatedImageView's `BUFFER_SIZE`).
    public static let minimumBufferBytes: Int64 = 10 * 1024 * 1024

    /// The queue `onFrameChange` and `onLoopEnd` run on. Default: a private serial queue.
    public let deliveryQueue: DispatchQueue

    let state: Mutex<PlayerState>
    /// Decodes frames ahead, one fetch operation at a time.
    let worker = DispatchQueue(label: "webimage.player.buffer", qos: .userInitiated)
    /// Runs the ticker's timer.
    let tickQueue = DispatchQueue(label: "webimage.player.tick", qos: .userInteractive)

    /// Makes a player.
    ///
    /// - Parameters:
    ///   - image: what to play; `nil` for none yet.
    ///   - deliveryQueue: where callbacks run; default a private serial queue.
    public init(image: (any AnimatedImage)? = nil, deliveryQueue: DispatchQueue? = nil) {
        self.deliveryQueue = deliveryQueue ?? DispatchQueue(label: "webimage.player.delivery")
        self.state = Mutex(PlayerState())
        if let image { self.image = image }
    }

    deinit {
        let timer = state.withLock { $0.timer }
        timer?.cancel()
    }

    /// The image being played. Setting it resets playback to frame 0, frees the old buffer off the caller's
    /// thread, and starts playing when `runsAutomatically` and the image has more than one frame.
    public var image: (any AnimatedImage)? {
        get { state.withLock { $0.image } }
        set { replaceImage(with: newValue) }
    }

    /// Whether setting an animated image starts playing it. Default `true`.
    public var runsAutomatically: Bool {
        get { state.withLock { $0.runsAutomatically } }
        set { state.withLock { $0.runsAutomatically = newValue } }
    }

    /// Ticks per second of the built-in timer (a `DispatchSourceTimer`). Default 60. Set 0 to drive the
    /// player yourself with `step(by:)` (a renderer with its own clock, or a deterministic test).
    public var preferredFramesPerSecond: Int {
        get { state.withLock { $0.framesPerSecond } }
        set {
            let playing = state.withLock { s -> Bool in
                s.framesPerSecond = max(0, newValue)
                return s.isPlaying
            }
            if playing { restartTicker() }
        }
    }

    /// Caps the buffer's memory in bytes; 0 (default) means the automatic size alone
    /// (min(20% of total memory, 60% of available), at least 10 MB).
    public var maxBufferSize: Int {
        get { state.withLock { $0.maxBufferSize } }
        set {
            let budget = PlayerState.memoryBudget()
            state.withLock { s in
                s.maxBufferSize = max(0, newValue)
                s.maxBufferCount = s.computeMaxBufferCount(memoryBudget: budget)
            }
        }
    }

    /// The most frames the buffer may hold now, from memory and `maxBufferSize`, clamped to 1…512.
    public var maxBufferCount: Int { state.withLock { $0.maxBufferCount } }

    /// How many decoded frames the buffer holds now.
    public var bufferedFrameCount: Int { state.withLock { $0.buffer.count } }

    /// Called on `deliveryQueue` each time the shown frame changes.
    public var onFrameChange: (@Sendable (Frame) -> Void)? {
        get { state.withLock { $0.onFrameChange } }
        set { state.withLock { $0.onFrameChange = newValue } }
    }

    /// Called on `deliveryQueue` when the last loop ends (never for images that loop forever); the player then
    /// stops on the last frame.
    public var onLoopEnd: (@Sendable () -> Void)? {
        get { state.withLock { $0.onLoopEnd } }
        set { state.withLock { $0.onLoopEnd = newValue } }
    }

    /// Whether the player is playing.
    public var isPlaying: Bool { state.withLock { $0.isPlaying } }

    /// Loops completed since `play()`.
    public var currentLoop: Int { state.withLock { $0.loop } }

    /// The frame shown now, or `nil` with no image.
    public var currentFrame: Frame? {
        state.withLock { s in
            s.currentBuffer.map { Frame(index: s.currentIndex, buffer: $0, contentsRect: s.currentRect) }
        }
    }

    /// The index of the frame shown now. Setting it jumps there: the buffer is emptied, the frame decoded
    /// synchronously on the caller's thread, and the time within the frame reset. Out-of-range values are ignored.
    public var currentFrameIndex: Int {
        get { state.withLock { $0.currentIndex } }
        set { jump(to: newValue) }
    }

    /// Starts (or restarts after the last loop) playing. Does nothing without an animated image.
    public func play() {
        let start = state.withLock { s -> Bool in
            guard s.image != nil, s.frameCount > 1, !s.isPlaying else { return false }
            s.isPlaying = true
            s.loop = 0
            s.loopEnded = false
            return true
        }
        if start { restartTicker() }
    }

    /// Pauses on the current frame.
    public func pause() {
        let timer = state.withLock { s -> TickerTimer? in
            s.isPlaying = false
            defer { s.timer = nil }
            return s.timer
        }
        timer?.cancel()
    }
}
