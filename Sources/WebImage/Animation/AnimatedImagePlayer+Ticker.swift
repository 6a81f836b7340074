import Dispatch
import Foundation
import ImageCodec

extension AnimatedImagePlayer {
    /// Replaces the image: resets playback, frees the old buffer in the background, decodes frame 0 on the
    /// caller's thread (an `Image` has it already), and starts playing if `runsAutomatically`.
    func replaceImage(with image: (any AnimatedImage)?) {
        let first = image?.animatedFrame(at: 0)
        let firstRect = image?.animatedContentsRect(at: 0)
        // Everything the player needs from the image, read before locking: the image is the caller's code.
        let frameCount = image.map { max(1, $0.animatedFrameCount) } ?? 0
        let loopCount = image?.animatedLoopCount ?? 0
        let bytesPerFrame = image?.animatedBytesPerFrame ?? 0
        let durations = image.map { image in (0..<frameCount).map { image.animatedDuration(at: $0) } } ?? []
        let rects = image.map { image in (0..<frameCount).map { image.animatedContentsRect(at: $0) } } ?? []
        let budget = PlayerState.memoryBudget()
        var events: [Event] = []
        let (released, timer, autoplay) = state.withLock { s -> ([Int: BufferedFrame], TickerTimer?, Bool) in
            let old = s.buffer
            let timer = s.timer
            s.timer = nil
            s.image = image
            s.generation += 1
            s.buffer = [:]
            s.isFetching = false
            s.frameCount = frameCount
            s.loopCount = loopCount
            s.bytesPerFrame = bytesPerFrame
            s.durations = durations
            s.contentsRects = rects
            s.currentIndex = 0
            s.currentBuffer = first
            s.currentRect = firstRect
            s.time = 0
            s.loop = 0
            s.loopEnded = false
            s.bufferMiss = false
            s.isPlaying = false
            s.incrementalBufferCount = 0
            s.maxBufferCount = s.computeMaxBufferCount(memoryBudget: budget)
            if let first {
                events.append(.frame(s.onFrameChange, Frame(index: 0, buffer: first, contentsRect: firstRect)))
            }
            return (old, timer, s.runsAutomatically && s.frameCount > 1)
        }
        timer?.cancel()
        releaseInBackground(released)
        deliver(events)
        if autoplay { play() }
    }

    /// (Re)creates the built-in timer for the current `preferredFramesPerSecond` (none when 0).
    func restartTicker() {
        let (old, fps) = state.withLock { s -> (TickerTimer?, Int) in
            defer { s.timer = nil }
            return (s.timer, s.framesPerSecond)
        }
        old?.cancel()
        guard fps > 0 else { return }
        let source = DispatchSource.makeTimerSource(queue: tickQueue)
        let interval = 1.0 / Double(fps)
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
        source.setEventHandler { [weak self] in self?.tick() }
        let timer = TickerTimer(source)
        let installed = state.withLock { s -> Bool in
            guard s.isPlaying, s.timer == nil else { return false }
            s.timer = timer
            s.lastTick = DispatchTime.now().uptimeNanoseconds
            return true
        }
        // libdispatch traps when a suspended source is released: resume it either way, cancelled first when
        // another thread won the race (paused, or installed its own timer).
        if !installed { source.cancel() }
        source.resume()
    }

    /// One timer tick: steps by the real time elapsed since the previous tick (timers on Linux jitter).
    private func tick() {
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = state.withLock { s -> Double in
            defer { s.lastTick = now }
            return Double(now &- s.lastTick) / 1e9
        }
        step(by: elapsed)
    }
}
