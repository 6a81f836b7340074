import Foundation
import Synchronization
import KVCache

extension ImageLoadTask {
    /// Shared-tier step, after a disk miss: a hit is decoded, stored in memory and on the local disk, and
    /// completes with `.sharedCache`; a miss (or any tier failure — the tier logs and counts it) goes to the
    /// network. With `.useHTTPCache`, a stale hit is written to disk and revalidated like a disk entry.
    ///
    /// The lookup runs on the task's image queue, not on the cache's serial I/O queue: a tier may answer on the
    /// calling thread (`MemcachedTier` does when a connection is free), and a round trip there would hold every
    /// other request's disk lookup. An answer given on this thread before the call returns is decoded here at
    /// once; one from the tier's own threads hops to the image queue.
    func loadFromSharedTier() {
        guard !isDone, context.cache != nil else { return }
        imageQueue.async { [self] in
            guard !isDone, let cache = context.cache else { return }
            let call = InlineCall()
            cache.sharedEntry(forKey: context.cacheKey) { [self] data, metadata in
                guard !isDone else { return }
                guard let data else {
                    WebImageLog.logger.trace("shared tier miss", metadata: ["url": "\(context.url)"])
                    fetch(revalidating: nil)
                    return
                }
                if context.options.contains(.useHTTPCache), !isFreshForThisRequest(metadata) {
                    cache.storeOnDisk(data, forKey: context.cacheKey, metadata: metadata)
                    fetch(revalidating: CachedEntry(data: data, metadata: metadata))
                    return
                }
                let storesToDisk = !context.options.contains(.cacheMemoryOnly)
                if call.isInline {
                    decodeAndFinish(data, source: .sharedCache, metadata: metadata, storesToDisk: storesToDisk)
                } else {
                    imageQueue.async { [self] in
                        decodeAndFinish(data, source: .sharedCache, metadata: metadata, storesToDisk: storesToDisk)
                    }
                }
            }
            call.returned()
        }
    }
}

/// Tells a completion whether it runs inside the call that took it (same thread, before the call returned) —
/// so it is still on the caller's queue — or later, on another thread.
///
/// - Important: Thread-safe: `returned` is called by the calling thread after the call, `isInline` from the
///   completion's thread.
final class InlineCall: Sendable {
    private let thread = pthread_self()
    private let hasReturned = Atomic<Bool>(false)

    /// Call after the call that took the completion returned.
    func returned() { hasReturned.store(true, ordering: .releasing) }

    /// Whether the completion runs on the calling thread before the call returned.
    var isInline: Bool { !hasReturned.load(ordering: .acquiring) && pthread_equal(thread, pthread_self()) != 0 }
}
