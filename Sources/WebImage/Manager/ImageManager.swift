import Fetcher
import Foundation
import ImageCodec
import KVCache

/// Loads images: memory cache → disk cache → network → decode → cache → completion (YYWebImageManager).
///
/// ```swift
/// let operation = ImageManager.shared.requestImage(url: url) { image, url, source, stage, error in
///     guard stage == .finished, let image else { return }
///     print(image.width, image.height, source)
/// }
/// let image = try await ImageManager.shared.image(for: url)
/// ```
///
/// - Important: Thread-safe: request from any thread. A memory-cache hit completes synchronously on the
///   calling thread; other completions run on the network thread or an image queue — keep them short.
///   Releasing a manager never drops a request in flight: the work keeps what it needs (cache, queue) alive
///   and completes every caller, exactly once, as if the manager were still there.
public final class ImageManager: Sendable {
    /// The cache images are read from and stored in; `nil` for none.
    public let cache: ImageCache?
    /// The queue transfers run on.
    public let queue: FetchQueue
    /// Bounds the memory of this manager's decodes in flight (a decode waits, without blocking a thread, until
    /// its bitmap fits). Default: 20 % of the process's memory (cgroup-aware), between 64 MiB and 1 GiB.
    public let decodeBudget: DecodeBudget

    let configuration = Mutex(Configuration())
    let tasks = Mutex<[ImageTaskKey: ImageLoadTask]>([:])
    /// Decodes that failed, per variant, for `.ignoreFailedURL` (network failures are listed per URL by the
    /// queue's `FailedURLList`).
    let failedDecodes = FailedDecodeList()

    struct Configuration {
        var timeout: Double = 60
        var inactivityTimeout: Double? = 15
        var tls = TLSOptions()
        /// `nil` until set: then `ImageManager.defaultHeaders` (whose `Accept` follows the codec registry).
        var headers: [String: String]?
        var headersFilter: (@Sendable (URL, [String: String]) -> [String: String])?
        var cacheKeyFilter: (@Sendable (URL) -> String)?
        var sharedTransform: ImageTransform?
        var username: String?
        var password: String?
        // Transfer bounds and source policy (ImageManager+Transfers.swift).
        var maximumResponseSize: Int64? = FetchRequest.defaultMaximumResponseSize
        var connectTimeout: Double = 10
        var maximumRedirects = 10
        var sourcePolicy = SourcePolicy.allowAll
        var allowsFileURLs = true
    }

    /// The default manager: what `ImageTarget.setImage(with:)`, `ImageSetter`, `ImagePrefetcher` and every
    /// other API that takes a `manager:` use when none is given. Set it once, early, to give the whole
    /// application one cache, timeout and queue (Nuke's `ImagePipeline.shared = …`):
    ///
    /// ```swift
    /// ImageManager.shared = ImageManager(cache: try ImageCache(path: "/var/cache/app/images"))
    /// ```
    ///
    /// Until set, it is made on first use: `ImageCache` at `ImageCache.defaultPath()` (made with its missing
    /// parents) and `FetchQueue.shared`. If that folder cannot be opened even so (read-only, not a folder, out
    /// of descriptors…), the manager keeps a memory cache (`ImageCache.diskCache` is `nil`), logs a warning once
    /// with the reason, and keeps the error in `cache?.diskCacheError`. A default never read is never made (its
    /// folder is not touched).
    ///
    /// - Important: Thread-safe: read and set from any thread. A request in flight keeps the manager it
    ///   started on; setting another one affects only later calls.
    public static var shared: ImageManager {
        get {
            if let stored = sharedStorage.withLock({ $0 }) { return stored }
            // Made outside the lock: opening the folder may log (through a handler of the application's, which
            // may read `shared` itself). Two first readers racing make two; the first one stored wins.
            let made = makeShared(cachePath: ImageCache.defaultPath())
            return sharedStorage.withLock { stored in
                if let stored { return stored }
                stored = made
                return made
            }
        }
        set { sharedStorage.withLock { $0 = newValue } }
    }

    private static let sharedStorage = Mutex<ImageManager?>(nil)

    /// What `shared` is made by: a manager over the image cache at `cachePath`, or over a memory-only cache that
    /// says why (`diskCacheError`) when that folder cannot be opened. Logs the fallback as a warning.
    static func makeShared(cachePath: String, queue: FetchQueue = .shared) -> ImageManager {
        do {
            return ImageManager(cache: try ImageCache(path: cachePath), queue: queue)
        } catch {
            WebImageLog.logger.warning("disk cache unavailable; the shared image manager caches in memory only",
                                       metadata: ["path": "\(cachePath)", "error": "\(error)"])
            return ImageManager(cache: ImageCache(memoryOnlyAt: cachePath, because: error), queue: queue)
        }
    }

    /// Makes a manager over `cache` (none when `nil`), `queue` (default `FetchQueue.shared`) and
    /// `decodeBudget` (default a new `DecodeBudget()` of the default capacity; pass one budget to several
    /// managers to share it).
    public init(cache: ImageCache?, queue: FetchQueue = .shared, decodeBudget: DecodeBudget = DecodeBudget()) {
        self.cache = cache
        self.queue = queue
        self.decodeBudget = decodeBudget
    }

    /// Seconds the whole transfer may take, however fast bytes flow (a deadline). Default 60; a stalled
    /// transfer ends sooner, at `inactivityTimeout` (15 s).
    public var timeout: Double {
        get { configuration.withLock { $0.timeout } }
        set { configuration.withLock { $0.timeout = newValue } }
    }

    /// Headers sent with every request. Default `ImageManager.defaultHeaders`:
    /// `Accept: image/webp,image/apng,image/*;q=0.8`, led by the MIME types of registered codecs for other
    /// formats (`image/avif,image/jxl,…` once those modules registered), read at each request until set.
    public var headers: [String: String] {
        get { configuration.withLock { $0.headers } ?? Self.defaultHeaders }
        set { configuration.withLock { $0.headers = newValue } }
    }

    /// Rewrites the headers per URL just before a request (e.g. to add a signature). Default none.
    public var headersFilter: (@Sendable (URL, [String: String]) -> [String: String])? {
        get { configuration.withLock { $0.headersFilter } }
        set { configuration.withLock { $0.headersFilter = newValue } }
    }

    /// Maps a URL to its cache key (e.g. dropping the signature of a signed URL). Default: the absolute string.
    public var cacheKeyFilter: (@Sendable (URL) -> String)? {
        get { configuration.withLock { $0.cacheKeyFilter } }
        set { configuration.withLock { $0.cacheKeyFilter = newValue } }
    }

    /// A transform applied to every request that has none of its own. Default none.
    public var sharedTransform: ImageTransform? {
        get { configuration.withLock { $0.sharedTransform } }
        set { configuration.withLock { $0.sharedTransform = newValue } }
    }

    /// HTTP Basic credentials sent with every request. Default none.
    public var username: String? {
        get { configuration.withLock { $0.username } }
        set { configuration.withLock { $0.username = newValue } }
    }

    /// HTTP Basic password, with `username`. Default none.
    public var password: String? {
        get { configuration.withLock { $0.password } }
        set { configuration.withLock { $0.password = newValue } }
    }

    /// Forgets every decode failure listed for `.ignoreFailedURL` (per variant, 10 minutes each), so the next
    /// request of each tries again. Transfer failures are in `queue.failedURLs` (`removeAll()` there).
    /// Thread-safe.
    public func removeAllFailedDecodes() { failedDecodes.removeAll() }

    /// Transfers in flight on this manager's network thread now.
    public var networkActivityCount: Int { queue.thread.activity.current }

    /// The cache key of `url` (`cacheKeyFilter`, or the absolute string).
    public func cacheKey(for url: URL) -> String {
        configuration.withLock { $0.cacheKeyFilter }?(url) ?? url.absoluteString
    }

    /// The memory-cache key: the cache key plus what makes a different decoded image from the same bytes
    /// (thumbnail size, transform, decoded variant), as separate fields: a URL's fragment is part of the cache
    /// key and never taken for a variant.
    static func memoryKey(cacheKey: String, thumbnailPixelSize: Int?, transformID: String?,
                          variant: DecodeVariant) -> ImageCacheKey {
        ImageCacheKey(cacheKey, thumbnailPixelSize: thumbnailPixelSize, transformID: transformID, variant: variant)
    }
}
