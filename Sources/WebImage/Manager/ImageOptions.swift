/// What a request may do differently from the default flow (YYWebImageOptions, for Linux).
///
/// ```swift
/// manager.requestImage(url: url, options: [.progressive, .useHTTPCache]) { … }
/// ```
///
/// - Important: A value type; thread-safe.
public struct ImageOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: UInt32
    /// Options from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Deliver partial images while downloading (stage `.progress`, at most every 0.2 s): any partial image
    /// the incremental decoder can make (progressive JPEG scans, interlaced PNG passes, baseline rows). Never
    /// for WebP. Only while the manager's `DecodeBudget` has room for the partial decoder's bitmap at once
    /// (`DecodeBudget.reserveForPartialImages(cost:)`); else the request shows no partial images.
    public static let progressive = ImageOptions(rawValue: 1 << 0)
    /// Deliver blurred partial images while downloading (at most every 0.4 s), only for progressive JPEG and
    /// interlaced PNG, with YYWebImage's radius rule (sharper as more data arrives).
    public static let progressiveBlur = ImageOptions(rawValue: 1 << 1)
    /// Honour HTTP caching: serve a fresh disk entry (Cache-Control max-age / Expires) without a request, and
    /// revalidate a stale one with If-None-Match / If-Modified-Since (a 304 refreshes the stored entry and
    /// serves the cached bytes). Skips the memory-cache fast path so freshness is checked.
    public static let useHTTPCache = ImageOptions(rawValue: 1 << 2)
    /// Accept invalid TLS certificates (self-signed, expired, wrong host). For development only.
    public static let allowInvalidSSLCertificates = ImageOptions(rawValue: 1 << 3)
    /// Store cookies the server sets and send them back (in the manager's shared cookie jar).
    public static let handleCookies = ImageOptions(rawValue: 1 << 4)
    /// Skip the caches for reading: always download, then refresh both caches.
    public static let refreshImageCache = ImageOptions(rawValue: 1 << 5)
    /// Neither read from nor write to the disk cache.
    public static let ignoreDiskCache = ImageOptions(rawValue: 1 << 6)
    /// Setters: leave the target's current image in place instead of showing the placeholder first.
    public static let ignorePlaceholder = ImageOptions(rawValue: 1 << 7)
    /// Do not decode for display: the image keeps straight alpha (`isDecodedForDisplay == false`). For
    /// downloading without showing (re-encoding, analysis).
    public static let ignoreImageDecoding = ImageOptions(rawValue: 1 << 8)
    /// Decode only the first frame of animated images.
    public static let ignoreAnimatedImage = ImageOptions(rawValue: 1 << 9)
    /// Setters: do not set the image on the target; the completion gets it and decides.
    public static let avoidSetImage = ImageOptions(rawValue: 1 << 10)
    /// Remember URLs that fail for a non-transient reason and fail them at once next time, without a request,
    /// until the entry expires (10 minutes). A transfer failure (HTTP 404, …) lists the URL, for every request of
    /// it; a decode failure lists only the variant that failed (thumbnail size, transform, decode options): a
    /// full-size decode over the decode limits does not refuse the URL's thumbnails.
    public static let ignoreFailedURL = ImageOptions(rawValue: 1 << 11)
    /// Keep the image in the memory cache only: nothing is written to disk.
    public static let cacheMemoryOnly = ImageOptions(rawValue: 1 << 12)
    /// Queue the transfer behind normal ones.
    public static let lowPriority = ImageOptions(rawValue: 1 << 13)
    /// Queue the transfer ahead of normal ones.
    public static let highPriority = ImageOptions(rawValue: 1 << 14)
}

/// Where an image came from.
public enum ImageSource: Sendable, Hashable {
    /// No image (cancelled or failed).
    case none
    /// The memory cache, synchronously inside a setter's `setImage` call.
    case memoryCacheFast
    /// The memory cache, through an operation.
    case memoryCache
    /// The disk cache (decoded now).
    case diskCache
    /// The shared tier (`ImageCache.sharedTier`, e.g. a memcached pool), decoded now and written to the disk.
    case sharedCache
    /// The network (or a file URL).
    case remote
}

/// How far a request has come when its completion is called.
public enum ImageStage: Sendable, Hashable {
    /// A partial image while downloading (`.progressive` / `.progressiveBlur`); more calls follow.
    case progress
    /// The request was cancelled; the last call.
    case cancelled
    /// The request finished, with an image or an error; the last call.
    case finished
}
