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
    /// still delivered.
    func storeOnDisk(_ data: Data, forKey key: String, metadata: ImageCacheMetadata) {
        ioQueue.async { [self] in
            do {
                try diskCache.setObject(data, forKey: key, extendedData: try metadata.encoded())
            } catch {
                WebImageLog.logger.warning("disk cache write failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
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
