import Dispatch
import Foundation
import KVCache

extension ImageCache {
    /// A queue held weakly: the `ImageCache`s of a path hold it, the map only finds it.
    private struct WeakQueue {
        weak var queue: DispatchQueue?
    }

    private static let ioQueues = Mutex<[String: WeakQueue]>([:])

    /// The I/O queue of the folder at `path`, shared by every live `ImageCache` of that path (created on
    /// first use). The map holds queues weakly and drops dead entries whenever it adds one, so it holds at
    /// most the live paths plus the ones that died since the last addition.
    static func ioQueue(forPath path: String) -> DispatchQueue {
        ioQueues.withLock { queues in
            if let queue = queues[path]?.queue { return queue }
            queues = queues.filter { $0.value.queue != nil }
            let queue = DispatchQueue(label: "webimage.cache.io", qos: .userInitiated)
            queues[path] = WeakQueue(queue: queue)
            return queue
        }
    }

    /// Entries in the map of I/O queues (tests).
    static var ioQueueEntryCount: Int { ioQueues.withLock { $0.count } }

    /// Stores bytes on disk in the background, on the cache's I/O queue, so a request completes without
    /// waiting for its disk write (YYImageCache writes the same way). A failure is logged: the image was
    /// still delivered. A key over the disk cache's `keyLengthLimit` is not cached (logged at debug level);
    /// metadata over its `extendedDataSizeLimit` is stored without its HTTP facts (`fittingMetadata`).
    func storeOnDisk(_ data: Data, forKey key: String, metadata: ImageCacheMetadata) {
        guard isCacheableKey(key) else {
            WebImageLog.logger.debug("key over the cache's key length limit; not cached on disk",
                                     metadata: ["bytes": "\(key.utf8.count)"])
            return
        }
        guard let diskCache else { return }
        ioQueue.async { [self] in
            do {
                try diskCache.setObject(data, forKey: key, extendedData: try fittingMetadata(metadata))
            } catch {
                WebImageLog.logger.warning("disk cache write failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// Takes `key` out of the caches without blocking, when a response replaced the stored one and may not be
    /// stored in its place (`no-store` under `.useHTTPCache`, a 206): RFC 9111 §4.3.3 (the stored response is not
    /// suitable any more) and §3 (the new one is not kept). Every decoded image of it leaves memory now; with
    /// `disk`, its disk entry leaves on the I/O queue (after the writes queued before it) and its shared-tier copy
    /// once that key's writes in flight are answered. A failure is logged.
    func removeReplacedEntry(forKey key: String, disk: Bool) {
        removeFromMemory(forKey: key)
        guard disk, isCacheableKey(key) else { return } // a longer key is never stored
        removeFromSharedTier(forKey: key) // the fleet's copy too
        guard let diskCache else { return }
        ioQueue.async {
            // A read first: most no-store responses replace nothing, and a removal is a write transaction.
            do { if try diskCache.containsObject(forKey: key) { try diskCache.removeObject(forKey: key) } } catch {
                WebImageLog.logger.warning("could not remove a replaced disk cache entry",
                                           metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// Whether `key` fits the disk cache's `keyLengthLimit`: what the pipeline caches at all (a longer key is
    /// delivered, not cached, in memory or on disk).
    func isCacheableKey(_ key: String) -> Bool {
        key.utf8.count <= diskCache?.keyLengthLimit ?? DiskCache.defaultKeyLengthLimit
    }

    /// The encoded `metadata`, or, when that is over the disk cache's `extendedDataSizeLimit` (validators of
    /// hundreds of kilobytes), the encoded metadata without its HTTP facts: the bytes are still cached, and a
    /// `.useHTTPCache` request revalidates them with a full request (logged at debug level).
    func fittingMetadata(_ metadata: ImageCacheMetadata) throws -> Data {
        let encoded = try metadata.encoded()
        let limit = diskCache?.extendedDataSizeLimit ?? DiskCache.defaultExtendedDataSizeLimit
        guard encoded.count > limit, metadata.http != nil else { return encoded }
        WebImageLog.logger.debug("cache metadata over the limit; HTTP facts dropped",
                                 metadata: ["bytes": "\(encoded.count)", "limit": "\(limit)"])
        return try ImageCacheMetadata(scale: metadata.scale).encoded()
    }

    /// Blocks until the disk writes queued so far are done. The cache's own disk reads do this first, so a
    /// read always sees the writes of the requests that completed before it. Call it before your process
    /// exits (a command-line tool, a batch job) so the last images reach the disk.
    ///
    /// - Important: Cheap when nothing is pending; does nothing when called on the I/O queue itself.
    public func waitForPendingWrites() {
        guard !DispatchQueue.isCurrent(ioQueue) else { return }
        ioQueue.sync {}
    }
}
