import Fetcher
import Foundation
import ImageCodec

extension ImageManager {
    /// Requests the image at `url` and returns its operation at once.
    ///
    /// The flow: memory cache (synchronous: a hit completes before this returns, source `.memoryCache`) →
    /// disk cache on an image queue (`.diskCache`) → network (`.remote`) → decode → transform → store → complete.
    /// Identical requests in flight share one transfer and one decode.
    ///
    /// - Parameters:
    ///   - url: the image's URL (`http`, `https` or `file`).
    ///   - options: see `ImageOptions`. Default none.
    ///   - thumbnailPixelSize: decode downsampled so the longest side is at most this many pixels (first frame),
    ///     cached in memory under its own key; the disk keeps the original bytes. Default `nil` (full size).
    ///   - progress: download progress, on the network thread.
    ///   - transform: applied after decoding; default `sharedTransform`.
    ///   - completion: called exactly once with `.finished` or `.cancelled` (partial images before, with
    ///     `.progressive`).
    @discardableResult
    public func requestImage(url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil,
                             progress: ImageProgress? = nil, transform: ImageTransform? = nil,
                             completion: @escaping ImageCompletion) -> ImageOperation {
        let operation = ImageOperation(url: url, progress: progress, completion: completion)
        let config = configuration.withLock { $0 }
        let transform = transform ?? config.sharedTransform
        let cacheKey = config.cacheKeyFilter?(url) ?? url.absoluteString
        let variant = DecodeVariant(options: options, cache: cache)
        let memoryKey = Self.memoryKey(cacheKey: cacheKey, thumbnailPixelSize: thumbnailPixelSize,
                                       transformID: transform?.id, variant: variant)
        if let image = memoryImage(forKey: memoryKey, url: url, options: options) {
            operation.finish(image: image, source: .memoryCache, error: nil)
            return operation
        }
        let context = ImageLoadContext(url: url, cacheKey: cacheKey, memoryKey: memoryKey, options: options,
                                       thumbnailPixelSize: thumbnailPixelSize, variant: variant, transform: transform,
                                       fetchRequest: fetchRequest(for: url, options: options, configuration: config),
                                       cache: cache, queue: queue, decodeBudget: decodeBudget,
                                       failedDecodes: failedDecodes)
        let priority = context.fetchRequest.priority
        let key = ImageTaskKey(memoryKey: memoryKey, options: options.rawValue & ImageTaskKey.sharedOptionsMask)
        let (task, isNew) = tasks.withLock { registry -> (ImageLoadTask, Bool) in
            if let existing = registry[key], existing.attach(operation, priority: priority) { return (existing, false) }
            let task = ImageLoadTask(key: key, context: context) { [weak self] task in self?.unregister(task) }
            _ = task.attach(operation, priority: priority)
            registry[key] = task
            return (task, true)
        }
        if isNew { task.start() }
        return operation
    }

    /// The memory-cache image for `memoryKey` (of `url`), unless the options skip the memory cache.
    func memoryImage(forKey memoryKey: ImageCacheKey, url: URL, options: ImageOptions) -> Image? {
        guard let cache, !options.contains(.refreshImageCache) else { return nil }
        // With `.useHTTPCache`, a memory hit only while its original is known fresh, for this request's headers
        // when it varied on some (else revalidate).
        if options.contains(.useHTTPCache), !cache.freshness.isFresh(memoryKey.key, requestHeaders: { [self] in
            fetchRequest(for: url, options: options, configuration: configuration.withLock { $0 }).headers
        }) { return nil }
        return cache.memoryCache.object(forKey: memoryKey)
    }

    /// The memory-cache image a setter may show at once, or `nil`.
    func memoryImage(for url: URL, options: ImageOptions, thumbnailPixelSize: Int?, transform: ImageTransform?) -> Image? {
        let transform = transform ?? sharedTransform
        let key = Self.memoryKey(cacheKey: cacheKey(for: url), thumbnailPixelSize: thumbnailPixelSize,
                                 transformID: transform?.id, variant: DecodeVariant(options: options, cache: cache))
        return memoryImage(forKey: key, url: url, options: options)
    }

    private func unregister(_ task: ImageLoadTask) {
        tasks.withLock { registry in
            if registry[task.key] === task { registry[task.key] = nil }
        }
    }

    /// The transfer for `url` with the manager's headers, timeout and credentials and the request's options.
    func fetchRequest(for url: URL, options: ImageOptions, configuration config: Configuration) -> FetchRequest {
        let base = config.headers ?? Self.defaultHeaders
        let headers = config.headersFilter?(url, base) ?? base
        var request = FetchRequest(url: url, headers: headers, timeout: config.timeout,
                                   priority: options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : .normal)
        if let user = config.username {
            request.credentials = FetchRequest.Credentials(user: user, password: config.password ?? "")
        }
        request.handlesCookies = options.contains(.handleCookies)
        request.allowsInvalidCertificates = options.contains(.allowInvalidSSLCertificates)
        request.usesFailedURLList = options.contains(.ignoreFailedURL)
        request.maximumResponseSize = config.maximumResponseSize
        request.connectTimeout = config.connectTimeout
        request.inactivityTimeout = config.inactivityTimeout
        request.tls = config.tls
        request.maximumRedirects = config.maximumRedirects
        request.sourcePolicy = config.sourcePolicy
        request.allowsFileURLs = config.allowsFileURLs
        return request
    }
}
