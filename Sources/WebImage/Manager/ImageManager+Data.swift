import Fetcher
import Foundation

extension ImageManager {
    /// The original bytes of the image at `url`, undecoded: the disk cache first, then the cache's shared tier
    /// when it has one (a hit is written to the local disk), else one transfer with this manager's headers,
    /// timeout, credentials, response-size limit, source policy and `file` URL rule; the bytes fetched are stored
    /// on disk under the URL's cache key (unless `options` has `.ignoreDiskCache` or `.cacheMemoryOnly`) and,
    /// off the caller's path, in the shared tier. For callers that decode themselves (an image service choosing the downsampling
    /// from the header): nothing is decoded and the memory cache is not read.
    ///
    /// With `.useHTTPCache`, as `requestImage`: a disk entry is used only while fresh for this request's headers,
    /// else revalidated (a 304 serves it and refreshes its HTTP facts); a response with `no-store` is not stored,
    /// and takes out what the caches held for the URL (disk, shared tier, its decoded images in memory). Without
    /// it, any disk entry is used. A response other than a whole one (206…) is never stored; answering a
    /// revalidation or a refresh, it takes the stored entry out as well.
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
        let usesHTTPCache = options.contains(.useHTTPCache)
        var stale: (data: Data, metadata: ImageCacheMetadata)?
        if usesDisk, !options.contains(.refreshImageCache), let cache, let data = try cache.getImageData(forKey: cacheKey) {
            guard usesHTTPCache else { return (data, .diskCache) }
            let metadata = try cache.getMetadata(forKey: cacheKey) ?? ImageCacheMetadata()
            let headers = fetchRequest(for: url, options: options, configuration: config).headers
            if let http = metadata.http, http.isFresh(), http.matchesVary(requestHeaders: headers) { return (data, .diskCache) }
            stale = (data, metadata)
        }
        if usesDisk, !options.contains(.refreshImageCache), let cache, cache.sharedTier != nil {
            let (shared, metadata) = await withCheckedContinuation { continuation in
                cache.sharedEntry(forKey: cacheKey) { data, metadata in continuation.resume(returning: (data, metadata)) }
            }
            let isFresh = !usesHTTPCache || metadata.http.map({ $0.isFresh() && $0.matchesVary(
                requestHeaders: fetchRequest(for: url, options: options, configuration: config).headers) }) == true
            if let shared, !isFresh, stale == nil {
                // Stale for this request: revalidated below with its validators, as `requestImage` does (a worker
                // with an empty disk would otherwise fetch the whole source again); kept on the local disk.
                do {
                    try cache.setImage(nil, imageData: shared, forKey: cacheKey, type: .disk, metadata: metadata)
                } catch {
                    WebImageLog.logger.warning("could not store shared-tier bytes", metadata: ["url": "\(url)", "error": "\(error)"])
                }
                stale = (shared, metadata)
            }
            if let shared, isFresh {
                do {
                    try cache.setImage(nil, imageData: shared, forKey: cacheKey, type: .disk, metadata: metadata)
                } catch {
                    WebImageLog.logger.warning("could not store shared-tier bytes", metadata: ["url": "\(url)", "error": "\(error)"])
                }
                return (shared, .sharedCache)
            }
        }
        var request = fetchRequest(for: url, options: options, configuration: config)
        let requestHeaders = request.headers // what `Vary` compares (without the conditional fields added below)
        // Revalidate stale bytes only when there is something to validate with (a 304 to an unconditional request
        // validates nothing: RFC 9111 §4.3.4).
        let revalidating = stale.flatMap { $0.metadata.http?.hasValidators == true ? $0 : nil }
        if let http = revalidating?.metadata.http {
            for (name, value) in http.conditionalHeaders { request.headers[name] = value }
        }
        let result: FetchResult
        do {
            result = try await queue.fetch(request)
        } catch .cancelled where Task.isCancelled {
            throw CancellationError()
        } catch .notModified(let response) where revalidating != nil {
            let (data, metadata) = revalidating!
            let stored = metadata.http ?? HTTPCachePolicy()
            guard stored.canBeFreshened(by: response) else {
                // Another representation is current: fetch it, without the stale entry.
                return try await imageData(for: url, options: options.union(.refreshImageCache))
            }
            var refreshed = metadata
            var http = stored.refreshed(with: response)
            http.updateVary(after: response, requestHeaders: requestHeaders)
            refreshed.http = http
            do {
                if http.noStore {
                    try cache?.removeImage(forKey: cacheKey, type: .disk)
                    cache?.removeFromSharedTier(forKey: cacheKey) // the fleet's copy too
                } else {
                    try cache?.setMetadata(refreshed, forKey: cacheKey)
                }
            } catch {
                WebImageLog.logger.warning("could not refresh cache metadata after 304", metadata: ["url": "\(url)", "error": "\(error)"])
            }
            return (data, .diskCache)
        } catch {
            throw WebImageError.fetchFailed(error)
        }
        let isWholeRepresentation = HTTPCachePolicy.isStorable(status: result.response.statusCode)
        var http = HTTPCachePolicy(response: result.response)
        http.recordVary(of: result.response, requestHeaders: requestHeaders)
        let noStore = usesHTTPCache && http.noStore
        // A response that may not be stored leaves nothing of the key behind, as in `requestImage`: with no-store,
        // always; a partial one when it replaces the stored entry (it answered its revalidation, or a refresh).
        if let cache, noStore || ((stale != nil || options.contains(.refreshImageCache)) && !isWholeRepresentation) {
            cache.removeReplacedEntry(forKey: cacheKey, disk: !options.contains(.ignoreDiskCache))
        }
        if usesDisk, let cache, isWholeRepresentation, !noStore {
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
