import Dispatch
import Synchronization

/// The gate every background task of a `DiskCacheCore` passes (trash sweeps, checkpoints, folds of the
/// access log, snapshot releases, the auto-trim loop): once `close()` has returned, no task runs any more and
/// none is still running, so nothing of the cache touches its folder after its last handle is gone.
///
/// - Important: Thread-safe. `close()` waits for the tasks running, so it must not be called from one of them
///   (no task holds a `DiskCache` handle, whose release is what calls it).
final class BackgroundWork: Sendable {
    private let closed = Mutex(false)
    private let running = DispatchGroup()

    /// Whether `close()` has begun: a long task (a trim) checks it between its steps and stops.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Runs `body` on the calling thread unless the gate is closed; returns whether it ran.
    @discardableResult
    func run(_ body: () -> Void) -> Bool {
        let entered = closed.withLock { isClosed -> Bool in
            guard !isClosed else { return false }
            running.enter()
            return true
        }
        guard entered else { return false }
        defer { running.leave() }
        body()
        return true
    }

    /// Lets no task start and waits for the running ones to end. Idempotent.
    func close() {
        closed.withLock { $0 = true }
        running.wait()
    }
}
