import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The gate every background task of a `DiskCacheCore` passes (trash sweeps, checkpoints, folds of the
/// access log, snapshot releases, the auto-trim loop): once `close()` has returned, no task runs any more and
/// none is still running, so nothing of the cache touches its folder after its last handle is gone.
///
/// - Important: Thread-safe. A `close()` called from inside a task (its last handle released by something the
///   task freed or called, such as a log handler) waits for the other tasks, not for the one it runs in,
///   which then goes on only until it next checks `isClosed`.
final class BackgroundWork: Sendable {
    private struct State {
        var closed = false
        /// The tasks running on each thread (`pthread_self()`), nested ones counted.
        var running: [UInt: Int] = [:]
    }

    private let state = Mutex(State())
    private let running = DispatchGroup()

    /// Whether `close()` has begun: a long task (a trim) checks it between its steps and stops.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Runs `body` on the calling thread unless the gate is closed; returns whether it ran.
    @discardableResult
    func run(_ body: () -> Void) -> Bool {
        let thread = UInt(pthread_self())
        let entered = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.running[thread, default: 0] += 1
            running.enter()
            return true
        }
        guard entered else { return false }
        defer {
            state.withLock { state in
                let left = (state.running[thread] ?? 1) - 1
                state.running[thread] = left > 0 ? left : nil
            }
            running.leave()
        }
        body()
        return true
    }

    /// Lets no task start and waits for the running ones to end, except those running on the calling thread.
    /// Idempotent.
    func close() {
        let thread = UInt(pthread_self())
        let own = state.withLock { state -> Int in
            state.closed = true
            return state.running[thread] ?? 0
        }
        // This thread's own tasks are below us on its stack: waiting for them would never end. Their entries
        // are left for the wait and taken back after it, so each task's own leave still balances.
        for _ in 0..<own { running.leave() }
        running.wait()
        for _ in 0..<own { running.enter() }
    }
}
