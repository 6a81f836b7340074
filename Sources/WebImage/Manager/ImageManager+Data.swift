import Fetcher
import Foundation

extension ImageManager {
    /// The original bytes of the image at `url`, undecoded: the disk cache first, then the cache's shared tier
    /// when it has one (a hit is written to the local disk), else one transfer with this manager's headers,
    /// timeout, credentials, response-size limit, source policy and `file` URL rule; the bytes fetched are stored
    /// on disk under the URL's cache key (unless `options` has `.ignoreDiskCache` or `.cacheMemoryOnly`) and,
    /// off the caller's path, in the shared tier. For callers that decode themselves (an image service choosing the downsampling
    /// from the header): nothing is decoded and the memory cache is not touched.
    ///
    /// Cancelling the calling task cancels the transfer. Identical calls in flight are not merged here (an
    /// image service merges them above, per result).
    ///
    /// - Returns: the bytes and where they came from (`.diskCache`, `.sharedCache` or `.remote`).
    /// - Throws: `WebImageError.fetchFailed` (with the `FetchError`), `.cacheFailed` for a disk failure while
    ///   reading (a failure while storing is logged, the bytes are still returned); `CancellationError` when
    ///   the task was cancelled.
    /// - Important: Thread-safe. The disk read runs on the calling thread.
    public func imageData(for url: URL, options: ImageOptions = []) async throws -> (data: Data, source: ImageSource) {
        let config = configuration.withLock { $0 }
        let cacheKey = config.cacheKeyFilter?(url) ?? url.absoluteString
        // A key over the disk cache's key length limit is not cached (fetched every time).
        let usesDisk = !options.contains(.ignoreDiskCache) && !options.contains(.cacheMemoryOnly)
            && (cache?.isCacheableKey(cacheKey) ?? true)
        if usesDisk, !options.contains(.refreshImageCache), let cache, let data = try cache.getImageData(forKey: cacheKey) {
            return (data, .diskCache)
        }
        if usesDisk, !options.contains(.refreshImageCache), let cache, cache.sharedTier != nil {
            let (shared, metadata) = await withCheckedContinuation { continuation in
                cache.sharedEntry(forKey: cacheKey) { data, metadata in continuation.resume(returning: (data, metadata)) }
            }
            if let shared {
                do {
                    try cache.setImage(nil, imageData: shared, forKey: cacheKey, type: .disk, metadata: metadata)
                } catch {
                    WebImageLog.logger.warning("could not store shared-tier bytes", metadata: ["url": "\(url)", "error": "\(error)"])
                }
                return (shared, .sharedCache)
            }
        }
        let result: FetchResult
        do {
            result = try await queue.fetch(fetchRequest(for: url, options: options, configuration: config))
        } catch .cancelled where Task.isCancelled {
            throw CancellationError()
        } catch {
            throw WebImageError.fetchFailed(error)
        }
        if usesDisk, let cache {
            let http = HTTPCachePolicy(response: result.response)
            let metadata = ImageCacheMetadata(scale: 1, http: http)
            cache.storeInSharedTier(result.body, forKey: cacheKey, metadata: metadata)
            do {
                // Validators over the disk cache's extended-data limit are dropped, not the bytes.
                let fitting = (try? cache.fittingMetadata(metadata)).flatMap(ImageCacheMetadata.decode) ?? ImageCacheMetadata()
                try cache.setImage(nil, imageData: result.body, forKey: cacheKey, type: .disk, metadata: fitting)
            } catch {
                WebImageLog.logger.warning("could not store fetched bytes", metadata: ["url": "\(url)", "error": "\(error)"])
            }
        }
        return (result.body, .remote)
    }
}
