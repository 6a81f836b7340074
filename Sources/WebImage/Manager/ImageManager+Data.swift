import Fetcher
import Foundation

extension ImageManager {
    /// The original bytes of the image at `url`, undecoded: the disk cache first, else one transfer with this
    /// manager's headers, timeout, credentials, response-size limit, source policy and `file` URL rule; the
    /// bytes fetched are stored on disk under the URL's cache key (unless `options` has `.ignoreDiskCache` or
    /// `.cacheMemoryOnly`). For callers that decode themselves (an image service choosing the downsampling
    /// from the header): nothing is decoded and the memory cache is not touched.
    ///
    /// Cancelling the calling task cancels the transfer. Identical calls in flight are not merged here (an
    /// image service merges them above, per result).
    ///
    /// - Returns: the bytes and where they came from (`.diskCache` or `.remote`).
    /// - Throws: `WebImageError.fetchFailed` (with the `FetchError`), `.cacheFailed` for a disk failure while
    ///   reading (a failure while storing is logged, the bytes are still returned); `CancellationError` when
    ///   the task was cancelled.
    /// - Important: Thread-safe. The disk read runs on the calling thread.
    public func imageData(for url: URL, options: ImageOptions = []) async throws -> (data: Data, source: ImageSource) {
        let config = configuration.withLock { $0 }
        let cacheKey = config.cacheKeyFilter?(url) ?? url.absoluteString
        let usesDisk = !options.contains(.ignoreDiskCache) && !options.contains(.cacheMemoryOnly)
        if usesDisk, !options.contains(.refreshImageCache), let cache, let data = try cache.getImageData(forKey: cacheKey) {
            return (data, .diskCache)
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
            let http = HTTPCachePolicy(headers: result.response.headerDictionary)
            do {
                try cache.setImage(nil, imageData: result.body, forKey: cacheKey, type: .disk,
                                   metadata: ImageCacheMetadata(scale: 1, http: http))
            } catch {
                WebImageLog.logger.warning("could not store fetched bytes", metadata: ["url": "\(url)", "error": "\(error)"])
            }
        }
        return (result.body, .remote)
    }
}
