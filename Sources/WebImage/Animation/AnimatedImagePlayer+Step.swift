import Dispatch
import ImageCodec

extension AnimatedImagePlayer {
    /// Advances the clock by `seconds` and moves to the next frame when the current one's duration is reached
    /// (YYAnimatedImageView's `step:`). Call it from your renderer's clock when `preferredFramesPerSecond` is 0;
    /// the built-in ticker calls it otherwise.
    ///
    /// - Never skips a frame: time left over after advancing is clamped to the next frame's duration.
    /// - A frame not buffered yet holds the current frame (a buffer miss) and is retried on the next step.
    /// - Counts loops; when `image.animatedLoopCount` loops have played, stops on the last frame and calls
    ///   `onLoopEnd`.
    /// - Returns: the index of the frame shown after the step.
    @discardableResult
    public func step(by seconds: Double) -> Int {
        var events: [Event] = []
        var fetch: FetchRequest?
        let index = state.withLock { s -> Int in
            guard let image = s.image, s.isPlaying, s.frameCount > 1 else { return s.currentIndex }
            // Only values cached from `image` are read here: its methods are the caller's code and never run
            // under the lock (`image` is only handed to the fetch, which calls it on the worker, unlocked).
            if s.loopEnded { return s.currentIndex }
            var nextIndex = (s.currentIndex + 1) % s.frameCount
            if !s.bufferMiss {
                s.time += max(0, seconds)
                let delay = s.duration(at: s.currentIndex)
                if s.time < delay { return s.currentIndex }
                s.time -= delay
                if nextIndex == 0 {
                    s.loop += 1
                    if s.loopCount != 0, s.loop >= s.loopCount {
                        s.loopEnded = true
                        s.isPlaying = false
                        events.append(.loopEnd(s.onLoopEnd, s.timer))
                        s.timer = nil
                        return s.currentIndex
                    }
                }
                s.time = min(s.time, s.duration(at: nextIndex))
            }
            var bufferIsFull = false
            if let buffered = s.buffer[nextIndex] {
                if s.incrementalBufferCount < s.frameCount { s.buffer[nextIndex] = nil }
                s.currentIndex = nextIndex
                if case .decoded(let buffer) = buffered { s.currentBuffer = buffer }
                s.currentRect = s.contentsRect(at: nextIndex)
                nextIndex = (nextIndex + 1) % s.frameCount
                s.bufferMiss = false
                bufferIsFull = s.buffer.count == s.frameCount
                if let buffer = s.currentBuffer {
                    events.append(.frame(s.onFrameChange, Frame(index: s.currentIndex, buffer: buffer, contentsRect: s.currentRect)))
                }
            } else {
                s.bufferMiss = true
            }
            if !bufferIsFull, !s.isFetching {
                s.isFetching = true
                fetch = FetchRequest(image: image, nextIndex: nextIndex, generation: s.generation)
            }
            return s.currentIndex
        }
        deliver(events)
        if let fetch { startFetch(fetch) }
        return index
    }

    /// Something to tell the app after a state change, delivered outside the lock.
    enum Event: Sendable {
        case frame((@Sendable (Frame) -> Void)?, Frame)
        case loopEnd((@Sendable () -> Void)?, TickerTimer?)
    }

    func deliver(_ events: [Event]) {
        for event in events {
            switch event {
            case .frame(let callback, let frame):
                if let callback { deliveryQueue.async { callback(frame) } }
            case .loopEnd(let callback, let timer):
                timer?.cancel()
                if let callback { deliveryQueue.async { callback() } }
            }
        }
    }

    /// Jumps to frame `index` (the `currentFrameIndex` setter).
    func jump(to index: Int) {
        guard let (image, generation) = state.withLock({ s -> ((any AnimatedImage), Int)? in
            guard let image = s.image, index >= 0, index < s.frameCount, index != s.currentIndex else { return nil }
            s.generation += 1
            return (image, s.generation)
        }) else { return }
        // Decode outside the lock; a newer jump or replacement wins (generation check).
        let buffer = image.animatedFrame(at: index)
        let rect = image.animatedContentsRect(at: index)
        var events: [Event] = []
        let released = state.withLock { s -> [Int: BufferedFrame] in
            guard s.generation == generation else { return [:] }
            let old = s.buffer
            s.buffer = [:]
            s.isFetching = false
            s.currentIndex = index
            if let buffer { s.currentBuffer = buffer }
            s.currentRect = rect
            s.time = 0
            s.loopEnded = false
            s.bufferMiss = false
            if let current = s.currentBuffer {
                events.append(.frame(s.onFrameChange, Frame(index: index, buffer: current, contentsRect: rect)))
            }
            return old
        }
        releaseInBackground(released)
        deliver(events)
    }

    /// Frees frames on the worker queue, so a large buffer is never freed on the caller's (UI) thread.
    func releaseInBackground(_ frames: [Int: BufferedFrame]) {
        guard !frames.isEmpty else { return }
        let box = ReleaseBox(frames)
        worker.async { box.drop() }
    }
}

/// Carries frames to the worker queue to be freed there.
///
/// `@unchecked Sendable`: the frames are immutable `PixelBuffer`s handed over by the only owner; nothing
/// else touches the box after it is created.
final class ReleaseBox: @unchecked Sendable {
    private var frames: [Int: BufferedFrame]
    init(_ frames: [Int: BufferedFrame]) { self.frames = frames }
    func drop() { frames.removeAll() }
}
