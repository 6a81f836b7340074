import Dispatch
import Synchronization

/// A serial queue and the one libmemcached handle used on it (made on first use, remade after a failure to
/// make it). The tier round-robins operations over its lanes: N lanes = N handles = at most N operations in
/// flight, with no handle ever shared between threads — libmemcached's `memcached_pool` would do the same but
/// its wait has whole-second granularity.
///
/// - Important: Thread-safe to submit to (`run`); `handle` is touched only on `queue`.
final class MemcachedLane: @unchecked Sendable {
    // @unchecked: `handle` is read and written only inside blocks on the serial `queue`.
    let queue: DispatchQueue
    private var handle: MemcachedHandle?
    private let makeHandle: @Sendable () throws(MemcachedTierError) -> MemcachedHandle
    /// Operations submitted and not finished yet.
    let pending = Atomic<Int>(0)

    init(index: Int, makeHandle: @escaping @Sendable () throws(MemcachedTierError) -> MemcachedHandle) {
        queue = DispatchQueue(label: "webimage.memcached.\(index)", qos: .userInitiated)
        self.makeHandle = makeHandle
    }

    /// Runs `body` on the lane's queue with its handle (`nil` when one cannot be made; logged).
    func run(_ body: @escaping @Sendable (MemcachedHandle?) -> Void) {
        pending.add(1, ordering: .relaxed)
        queue.async { [self] in
            defer { pending.subtract(1, ordering: .relaxed) }
            if handle == nil {
                do { handle = try makeHandle() } catch {
                    memcachedLog.error("could not make a libmemcached handle", metadata: ["error": "\(error)"])
                }
            }
            body(handle)
        }
    }
}
