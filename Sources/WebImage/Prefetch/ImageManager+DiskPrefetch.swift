import Fetcher
import Foundation
import ImageCodec
import KVCache

extension ImageManager {
    /// Brings `url`'s original bytes into the disk cache without decoding them (what `ImagePrefetcher` does
    /// with destination `.diskCache`): nothing when the disk already has them (source `.diskCache`), else one
    /// transfer and a disk write (source `.remote`). The completion gets no image.
    ///
    /// Bytes that are not a known image format are not stored (`.decodeFailed(.unknownFormat)`); with
    /// `.useHTTPCache`, a `Cache-Control: no-store` response is not stored either, and takes out what the caches
    /// held for the URL (with `.refreshImageCache`, a 206 too). Without a disk cache (no cache, `.ignoreDiskCache`
    /// or `.cacheMemoryOnly`) it finishes at once with source `.none` and no error.
    ///
    /// - Important: Thread-safe. The completion runs exactly once, on the cache's I/O queue or the network
    ///   thread (or on the caller's thread when cancelled).
    func prefetchToDisk(url: URL, options: ImageOptions, completion: @escaping ImageCompletion) -> ImageOperation {
        let operation = ImageOperation(url: url, progress: nil, completion: completion)
        guard let cache, !options.contains(.ignoreDiskCache), !options.contains(.cacheMemoryOnly) else {
            operation.finish(image: nil, source: .none, error: nil)
            return operation
        }
        let config = configuration.withLock { $0 }
        let key = config.cacheKeyFilter?(url) ?? url.absoluteString
        let request = fetchRequest(for: url, options: options, configuration: config)
        let queue = self.queue
        cache.ioQueue.async {
            guard !operation.isFinished else { return }
            do throws(KVCacheError) {
                if !options.contains(.refreshImageCache), try cache.diskCache?.containsObject(forKey: key) == true {
                    operation.finish(image: nil, source: .diskCache, error: nil)
                    return
                }
            } catch {
                operation.finish(image: nil, source: .none, error: .cacheFailed(error))
                return
            }
            let fetch = queue.fetch(request) { result in
                switch result {
                case .success(let fetched):
                    guard ImageFormat.sniff(fetched.body) != .unknown else {
                        WebImageLog.logger.debug("prefetch: not an image", metadata: ["url": "\(url)"])
                        operation.finish(image: nil, source: .none, error: .decodeFailed(.unknownFormat))
                        return
                    }
                    var http = HTTPCachePolicy(response: fetched.response)
                    http.recordVary(of: fetched.response, requestHeaders: request.headers)
                    // Not a 206 or another partial answer: only a whole representation is stored (RFC 9111 §3.3).
                    let isWhole = HTTPCachePolicy.isStorable(status: fetched.response.statusCode)
                    let noStore = options.contains(.useHTTPCache) && http.noStore
                    // Nothing of the key stays behind a response that may not be stored (as in `requestImage`):
                    // with no-store, always; a partial one when it answers a refresh.
                    if noStore || (options.contains(.refreshImageCache) && !isWhole) {
                        cache.removeReplacedEntry(forKey: key, disk: true)
                    }
                    if isWhole, !noStore {
                        let metadata = ImageCacheMetadata(scale: 1, http: http)
                        cache.storeOnDisk(fetched.body, forKey: key, metadata: metadata)
                        cache.storeInSharedTier(fetched.body, forKey: key, metadata: metadata)
                    }
                    operation.finish(image: nil, source: .remote, error: nil)
                case .failure(let error):
                    WebImageLog.logger.debug("prefetch failed", metadata: ["url": "\(url)", "error": "\(error)"])
                    operation.finish(image: nil, source: .none, error: .fetchFailed(error))
                }
            }
            // Cancelled meanwhile (or already done): stop the transfer; otherwise cancel() will.
            if !operation.setCancelHandler({ _ in fetch.cancel() }) { fetch.cancel() }
        }
        return operation
    }
}
