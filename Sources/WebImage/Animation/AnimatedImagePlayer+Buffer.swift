import Dispatch
import ImageCodec

extension AnimatedImagePlayer {
    /// One fetch operation: decode frames ahead starting at `nextIndex` (YYAnimatedImageView's
    /// `_YYAnimatedImageViewFetchOperation`).
    struct FetchRequest: @unchecked Sendable { // `image` is a Sendable AnimatedImage; the rest are values
        let image: any AnimatedImage
        let nextIndex: Int
        let generation: Int
    }

    /// Runs one fetch on the worker. Frames are decoded outside the lock; the buffer takes them only if the
    /// fetch is still current (no jump, replacement or memory pressure since it started).
    func startFetch(_ request: FetchRequest) {
        worker.async { [self] in
            // The buffer size is recomputed when growth resumes after memory pressure; read memory before locking.
            let budget = state.withLock { $0.incrementalBufferCount == -1 } ? PlayerState.memoryBudget() : nil
            let plan = state.withLock { s -> (count: Int, total: Int)? in
                guard s.generation == request.generation, s.image === request.image else { return nil }
                s.incrementalBufferCount += 1
                if s.incrementalBufferCount == 0, let budget { s.maxBufferCount = s.computeMaxBufferCount(memoryBudget: budget) }
                if s.incrementalBufferCount > s.maxBufferCount { s.incrementalBufferCount = s.maxBufferCount }
                return (max(1, s.incrementalBufferCount), s.frameCount)
            }
            defer {
                state.withLock { s in if s.generation == request.generation { s.isFetching = false } }
            }
            guard let plan else { return }
            var index = request.nextIndex
            for _ in 0..<plan.count {
                if index >= plan.total { index = 0 }
                let needed = state.withLock { s -> Bool? in
                    guard s.generation == request.generation else { return nil }
                    return s.buffer[index] == nil
                }
                guard let needed else { return }
                if needed {
                    let frame = request.image.animatedFrame(at: index).map(BufferedFrame.decoded) ?? .failed
                    let stored = state.withLock { s -> Bool in
                        guard s.generation == request.generation else { return false }
                        s.buffer[index] = frame
                        return true
                    }
                    if !stored { return }
                }
                index += 1
            }
        }
    }

    /// Call when the system is short of memory (Linux has no notification for it: wire it to your own signal,
    /// e.g. a cgroup `memory.events` watcher). Cancels buffering, keeps only the next frame, and lets the
    /// buffer grow back after 1–3 s of ticks (YYAnimatedImageView's rule).
    public func handleMemoryPressure() {
        let released = state.withLock { s -> [Int: BufferedFrame] in
            guard s.frameCount > 0 else { return [:] }
            s.generation += 1
            s.isFetching = false
            // About 60…180 ticks at 60 Hz before fetches decode more than one frame again.
            s.incrementalBufferCount = -60 - Int.random(in: 0..<120)
            let next = (s.currentIndex + 1) % s.frameCount
            var old = s.buffer
            s.buffer = [:]
            if let keep = old.removeValue(forKey: next) { s.buffer[next] = keep }
            return old
        }
        releaseInBackground(released)
    }

    /// Blocks until the buffering worker has finished what was queued so far: for tests and offline
    /// renderers that step deterministically.
    public func waitUntilBufferingIsIdle() {
        worker.sync {}
    }
}
