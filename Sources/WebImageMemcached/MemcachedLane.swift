import Dispatch
import Synchronization

/// One libmemcached handle behind a lock, and a serial queue for the operations that find it busy (made on
/// first use, remade after a failure to make it). The tier runs an operation on the calling thread in the first
/// lane whose lock is free at once, else queues it on a lane in turn: N lanes = N handles = at most N
/// operations in flight, with no handle ever used by two threads at a time — libmemcached's `memcached_pool`
/// would do the same but its wait has whole-second granularity.
///
/// - Important: Thread-safe. The handle is touched only under the lock; the work given to `run`/`runIfIdle`
///   must not call user code (its result is handed to the caller's continuation after the lock is released).
final class MemcachedLane: Sendable {
    let queue: DispatchQueue
    private let slot = Mutex<MemcachedHandle?>(nil)
    private let makeHandle: @Sendable () throws(MemcachedTierError) -> MemcachedHandle
    /// Operations queued and not finished yet (`run` only).
    let pending = Atomic<Int>(0)

    init(index: Int, makeHandle: @escaping @Sendable () throws(MemcachedTierError) -> MemcachedHandle) {
        queue = DispatchQueue(label: "webimage.memcached.\(index)", qos: .userInitiated)
        self.makeHandle = makeHandle
    }

    /// Runs `work` on this thread with the lane's handle (`nil` when one cannot be made; logged) if the lane is
    /// free now; `nil` without waiting when another thread holds it. The lines `work` logs are written after the
    /// lock is released.
    func runIfIdle<T: Sendable>(_ work: (MemcachedHandle?, inout LogBuffer) -> T) -> T? {
        guard let (result, log) = slot.withLockIfAvailable({ stored -> (T, LogBuffer) in
            var log = LogBuffer()
            let result = work(handle(&stored, &log), &log)
            return (result, log)
        }) else { return nil }
        log.emit()
        return result
    }

    /// Runs `work` with the lane's handle, waiting for it on this thread.
    func runWaiting<T: Sendable>(_ work: (MemcachedHandle?, inout LogBuffer) -> T) -> T {
        let (result, log) = slot.withLock { stored -> (T, LogBuffer) in
            var log = LogBuffer()
            let result = work(handle(&stored, &log), &log)
            return (result, log)
        }
        log.emit()
        return result
    }

    /// Queues `work` on the lane's queue, then calls `then` with its result there, after the lock is released.
    func run<T: Sendable>(_ work: @escaping @Sendable (MemcachedHandle?, inout LogBuffer) -> T,
                          then: @escaping @Sendable (T) -> Void) {
        pending.add(1, ordering: .relaxed)
        queue.async { [self] in
            let result = runWaiting(work)
            pending.subtract(1, ordering: .relaxed)
            then(result)
        }
    }

    /// The handle in `slot`, made now if there is none.
    private func handle(_ slot: inout MemcachedHandle?, _ log: inout LogBuffer) -> MemcachedHandle? {
        if slot == nil {
            do { slot = try makeHandle() } catch {
                log.add(.error, "could not make a libmemcached handle", metadata: ["error": "\(error)"])
            }
        }
        return slot
    }
}
