import Foundation
import KVCache

extension ImageLoadTask {
    /// Shared-tier step, after a disk miss: a hit is decoded, stored in memory and on the local disk, and
    /// completes with `.sharedCache`; a miss (or any tier failure — the tier logs and counts it) goes to the
    /// network. With `.useHTTPCache`, a stale hit is written to disk and revalidated like a disk entry.
    func loadFromSharedTier() {
        guard !isDone, let cache = context.cache else { return }
        cache.sharedEntry(forKey: context.cacheKey) { [self] data, metadata in
            guard !isDone else { return }
            guard let data else {
                WebImageLog.logger.trace("shared tier miss", metadata: ["url": "\(context.url)"])
                fetch(revalidating: nil)
                return
            }
            if context.options.contains(.useHTTPCache), !(metadata.http?.isFresh() ?? false) {
                cache.storeOnDisk(data, forKey: context.cacheKey, metadata: metadata)
                fetch(revalidating: CachedEntry(data: data, metadata: metadata))
                return
            }
            let storesToDisk = !context.options.contains(.cacheMemoryOnly)
            imageQueue.async { [self] in
                decodeAndFinish(data, source: .sharedCache, metadata: metadata, storesToDisk: storesToDisk)
            }
        }
    }
}
