import Dispatch
import Foundation
import KVCache

extension ImageCache {
    private static let ioQueues = Mutex<[String: DispatchQueue]>([:])

    /// The I/O queue of the folder at `path` (created on first use; kept for the life of the process, like
    /// the one `DiskCache` per path).
    static func ioQueue(forPath path: String) -> DispatchQueue {
        ioQueues.withLock { queues in
            if let queue = queues[path] { return queue }
            let queue = DispatchQueue(label: "webimage.cache.io", qos: .userInitiated)
            queues[path] = queue
            return queue
        }
    }

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
