import Fetcher
import Foundation
import ImageCodec

extension ImageLoadTask {
    /// Network step. With `revalidating`, sends the entry's validators; a 304 serves the cached bytes and
    /// refreshes their HTTP facts on disk, unless it names another entity tag (then the bytes are fetched anew,
    /// `replacing` the entry). A response that replaces the stored entry and may not be stored takes it out.
    func fetch(revalidating cached: CachedEntry?, replacing: Bool = false) {
        guard !isDone else { return }
        var request = context.fetchRequest
        request.priority = state.withLock { $0.priority }
        if let http = cached?.metadata.http {
            for (name, value) in http.conditionalHeaders { request.headers[name] = value }
        }
        let wantsPartials = context.options.contains(.progressive) || context.options.contains(.progressiveBlur)
        // The callbacks hold the task strongly: while the transfer runs they are all that keeps it (the manager's
        // registry only finds it), and the completion must run even if the manager is released meanwhile. The
        // cycle task → fetch → callbacks → task is broken when the task finishes (`finish` drops `fetch`).
        var onData: (@Sendable (Data) -> Void)?
        if wantsPartials {
            onData = { @Sendable [self] (chunk: Data) -> Void in didReceiveChunk(chunk) }
        }
        let operation = context.queue.fetch(
            request,
            onResponse: { [self] response in didReceiveResponse(response) },
            onData: onData,
            onProgress: { [self] received, expected in
                for subscriber in subscribers { subscriber.deliverProgress(received: received, expected: expected) }
            },
            completion: { [self] result in didFetch(result, revalidating: cached, replacing: replacing || cached != nil) }
        )
        let cancelled = state.withLock { s -> Bool in
            guard !s.isDone else { return true }
            s.fetch = operation
            operation.priority = s.priority // a caller that joined or left while the request was being made
            return false
        }
        if cancelled { operation.cancel() }
    }

    private func didReceiveResponse(_ response: FetchResponse) {
        state.withLock { $0.progressive.expectedLength = response.expectedContentLength }
    }

    /// `replacing`: the request was made in place of a stored entry (its revalidation, or the fetch after a 304
    /// that could not freshen it).
    private func didFetch(_ result: Result<FetchResult, FetchError>, revalidating cached: CachedEntry?, replacing: Bool) {
        switch result {
        case .success(let fetched):
            var http = HTTPCachePolicy(response: fetched.response)
            http.recordVary(of: fetched.response, requestHeaders: context.fetchRequest.headers)
            // A 206 (or any 2xx/3xx but 200 and 203) is not the whole representation: never stored, nor known
            // fresh for a memory hit (RFC 9111 §3.3: a cache without Range support must not store partial
            // content). File and data URLs have no status.
            let isWholeRepresentation = HTTPCachePolicy.isStorable(status: fetched.response.statusCode)
            let metadata = ImageCacheMetadata(scale: 1, http: isWholeRepresentation ? http : nil)
            let options = context.options
            let noStore = options.contains(.useHTTPCache) && http.noStore
            let storesToDisk = !options.contains(.ignoreDiskCache) && !options.contains(.cacheMemoryOnly)
                && !noStore && isWholeRepresentation
            // A response that may not be stored leaves nothing of the key behind (RFC 9111 §4.3.3, §3): with
            // no-store, always (whatever is stored is superseded, maybe a copy this lookup did not see); a partial
            // one, when it replaces the stored entry (it answered its revalidation — the origin did not say
            // 304 — or a refresh). Memory now (this image is stored there after its decode); the disk and the
            // shared tier unless the request skips the disk.
            let replacesStored = replacing || options.contains(.refreshImageCache)
            if let cache = context.cache, noStore || (replacesStored && !isWholeRepresentation) {
                cache.removeReplacedEntry(forKey: context.cacheKey, disk: !options.contains(.ignoreDiskCache))
            } else if let cache = context.cache, replacesStored {
                // Stored in place of the old bytes: the key's other images in memory (thumbnails, transforms) were
                // decoded from those, and the freshness this response records for the key must not pass them
                // off as fresh. They go; the next request of each decodes the new bytes.
                cache.removeFromMemory(forKey: context.cacheKey)
            }
            imageQueue.async { [self] in
                decodeAndFinish(fetched.body, source: .remote, metadata: metadata, storesToDisk: storesToDisk)
            }
        case .failure(.notModified(let response)) where cached != nil:
            let cached = cached!
            guard cached.metadata.http?.hasValidators == true else {
                // The request was unconditional (nothing to validate with): a 304 to it validates nothing, and
                // taking it would give the stored bytes its tag and lifetime (RFC 9111 §4.3.4). Fetch anew.
                WebImageLog.logger.info("304 to a request without validators; fetching the bytes again",
                                        metadata: ["url": "\(context.url)"])
                fetch(revalidating: nil, replacing: true)
                return
            }
            guard (cached.metadata.http ?? HTTPCachePolicy()).canBeFreshened(by: response) else {
                // The 304 names another representation than the cached bytes: they must not be freshened (nor
                // given its tag, which would make every later revalidation a 304 for the old bytes). Fetch anew.
                WebImageLog.logger.info("304 names another ETag than the cached bytes; fetching them again",
                                        metadata: ["url": "\(context.url)"])
                fetch(revalidating: nil, replacing: true)
                return
            }
            var refreshed = cached.metadata
            var http = (refreshed.http ?? HTTPCachePolicy()).refreshed(with: response)
            http.updateVary(after: response, requestHeaders: context.fetchRequest.headers)
            refreshed.http = http
            let metadata = refreshed
            if let cache = context.cache {
                let (key, url) = (context.cacheKey, context.url)
                // A 304 whose fields say no-store (they replace the stored ones, §4.3.4) takes the entry out of
                // the store: the bytes answer this request once more and are not kept.
                let removes = context.options.contains(.useHTTPCache) && http.noStore
                if removes { cache.removeFromSharedTier(forKey: key) } // the fleet's copy too
                cache.ioQueue.async {
                    do {
                        if removes {
                            try cache.diskCache?.removeObject(forKey: key)
                        } else {
                            try cache.diskCache?.setExtendedData(try cache.fittingMetadata(metadata), forKey: key)
                        }
                    } catch {
                        WebImageLog.logger.warning("could not refresh cache metadata after 304",
                                                   metadata: ["url": "\(url)", "error": "\(error)"])
                    }
                }
            }
            imageQueue.async { [self] in
                decodeAndFinish(cached.data, source: .diskCache, metadata: metadata, storesToDisk: false)
            }
        case .failure(.cancelled):
            // Only when every caller cancelled (they have completed already), or the queue was cancelled.
            finish(image: nil, source: .none, error: .fetchFailed(.cancelled))
        case .failure(let error):
            WebImageLog.logger.debug("fetch failed", metadata: ["url": "\(context.url)", "error": "\(error)"])
            finish(image: nil, source: .none, error: .fetchFailed(error))
        }
    }
}
