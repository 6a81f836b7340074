import Foundation
import ImageCodec
import KVCache
import Logging

/// Decoded images in memory and their original bytes on disk, under one path (YYImageCache).
///
/// - Memory: a `MemoryCache` of decoded `Image`s by `ImageCacheKey` (the cache key plus the variant: thumbnail
///   size, transform, decode options); cost = the bytes each entry holds (pixels, the encoded original when the
///   image keeps it, the key); cost limit 15 % of the process's memory (cgroup-aware), at most 768 MB; an image
///   over 10 % of the cost limit in force is not kept; age limit 12 h; auto-trim every 5 s (`ImageCacheLimits`).
/// - Disk: a `DiskCache` of the bytes as downloaded (animated GIF/APNG/WebP keep their bytes, so nothing is lost
///   by caching), with `ImageCacheMetadata` (scale, HTTP validators and freshness) as extended data. When only an
///   image is given, it is encoded: PNG if it has alpha, else JPEG at quality 0.9. Limits: 1 GiB, 7 days since
///   last access, 1 GiB of free space kept; trimmed every 60 s (`ImageCacheLimits`).
///
/// ```swift
/// let cache = try ImageCache(path: "/var/cache/myapp/images")
/// try cache.setImage(image, imageData: data, forKey: "https://example.com/a.jpg")
/// let hit = try cache.getImage(forKey: "https://example.com/a.jpg")       // memory, then disk
/// ```
///
/// - Important: Thread-safe. Methods touching `.disk` do file and SQLite I/O on the calling thread (after the
///   pipeline's pending background writes, so they see every completed request); use the completion or
///   `async` forms from latency-sensitive threads.
public final class ImageCache: Sendable {
    /// Decoded images by key and variant. Tune its limits directly (`memoryEntryCostLimit` follows its
    /// `costLimit`). Images stored here directly are not in the index of variants: `removeImage(forKey:)` finds
    /// them only when they are one of the full-size decode variants.
    public let memoryCache: MemoryCache<ImageCacheKey, Image>
    /// Original bytes by key; `nil` for a memory-only cache (`init(memoryOnlyWith:)`, or what
    /// `ImageManager.shared` uses when its folder cannot be opened: see `diskCacheError`). Without it, the `.disk`
    /// parts of this cache's methods do nothing (a read misses, a write is skipped).
    public let diskCache: DiskCache?
    /// Why this cache has no disk cache when one was asked for and could not be opened (`ImageManager.shared`
    /// falls back to a memory-only cache and says why here, after logging it once as a warning); `nil` otherwise.
    public let diskCacheError: KVCacheError?
    /// Where the disk cache lives (standardized); for a memory-only cache, the folder that was asked for, or
    /// empty.
    public let path: String
    /// Serial queue for the pipeline's disk lookups and background writes, one per folder in the process (so
    /// every `ImageCache` on a path shares it): a lookup never overtakes a write queued before it.
    let ioQueue: DispatchQueue
    /// The optional shared tier after the disk (`ImageCache+SharedTier.swift`).
    let sharedSlot = SharedTierSlot()

    /// Every variant of a key stored in memory, by the key's plain form (`ImageCacheKey.base`), so
    /// `removeImage(forKey:)` finds thumbnails and transformed images too (`ImageCache+Variants.swift`).
    let variantIndex = Mutex(VariantIndex())
    /// HTTP freshness of the originals of images in memory (`.useHTTPCache` serves fresh ones from memory).
    let freshness = FreshnessTable()

    private let settings = Mutex(Settings())
    private struct Settings {
        var allowAnimatedImage = true
        var decodeForDisplay = true
        var colorManagement = ColorManagement.sRGB
        /// `nil`: `ImageCacheLimits.entryShare` of the memory cache's cost limit in force.
        var memoryEntryCostLimit: Int?
    }

    /// The largest cost of one image kept in memory: a larger image is still delivered, but not cached in
    /// memory. Default: 10 % (`ImageCacheLimits.entryShare`) of `memoryCache.costLimit` as it is at each
    /// store, so `memoryCache.costLimit = 256 << 20` makes it 25.6 MB. Setting it fixes it at that value.
    /// Whatever it says, an image costing more than the whole `memoryCache.costLimit` is never kept (it would
    /// evict everything else and then itself). Thread-safe.
    public var memoryEntryCostLimit: Int {
        get {
            if let explicit = settings.withLock({ $0.memoryEntryCostLimit }) { return explicit }
            return ImageCacheLimits.entryCostLimit(forCostLimit: memoryCache.costLimit)
        }
        set { settings.withLock { $0.memoryEntryCostLimit = max(0, newValue) } }
    }

    /// Whether images decoded from disk keep every frame of an animation. Default `true`; `false` decodes
    /// the first frame only.
    public var allowAnimatedImage: Bool {
        get { settings.withLock { $0.allowAnimatedImage } }
        set { settings.withLock { $0.allowAnimatedImage = newValue } }
    }

    /// Whether images decoded from disk are decoded for display (premultiplied RGBA8). Default `true`.
    public var decodeForDisplay: Bool {
        get { settings.withLock { $0.decodeForDisplay } }
        set { settings.withLock { $0.decodeForDisplay = newValue } }
    }

    /// What decodes through this cache and its managers do with colour profiles. Default `.sRGB` (every image
    /// sRGB); `.preserve` keeps the file's pixels and profile. Part of the memory key (`DecodeVariant`).
    public var colorManagement: ColorManagement {
        get { settings.withLock { $0.colorManagement } }
        set { settings.withLock { $0.colorManagement = newValue } }
    }

    /// The default location: `$XDG_CACHE_HOME/webimage/<name>`, or `~/.cache/webimage/<name>`.
    public static func defaultPath(name: String = "images") -> String {
        let environment = ProcessInfo.processInfo.environment
        let base: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache"
        }
        return base + "/webimage/" + name
    }

    /// Opens (creating if needed) the image cache at `path`. Several `ImageCache`s on one path share the one
    /// `DiskCache` of that path in this process; each applies its `limits` to it when it opens.
    ///
    /// - Parameters:
    ///   - path: the folder (made with its missing parents, owner-only). Default `ImageCache.defaultPath()`.
    ///   - limits: memory and disk limits. Default `ImageCacheLimits.default` (bounded; see there). A
    ///     `memoryEntryCostLimit` equal to the share of `memoryCostLimit` (as in the defaults) follows the memory
    ///     cache's cost limit when it changes later; any other value is fixed.
    /// - Throws: `KVCacheError` when the folder (made with its missing parents, owner-only) or its database
    ///   cannot be created.
    public convenience init(path: String = ImageCache.defaultPath(), limits: ImageCacheLimits = .default) throws(KVCacheError) {
        self.init(diskCache: try DiskCache(path: path), path: nil, limits: limits, diskCacheError: nil)
    }

    /// Makes a cache with a memory cache only (`diskCache` is `nil`): images are kept decoded in memory, never
    /// on disk. For processes without a writable folder, or that must not write one.
    ///
    /// - Parameter limits: the memory limits (the disk ones are unused). Default `ImageCacheLimits.default`.
    public convenience init(memoryOnlyWith limits: ImageCacheLimits = .default) {
        self.init(diskCache: nil, path: "", limits: limits, diskCacheError: nil)
    }

    /// A memory-only cache standing in for the one at `path` that could not be opened (`error`).
    convenience init(memoryOnlyAt path: String, because error: KVCacheError, limits: ImageCacheLimits = .default) {
        self.init(diskCache: nil, path: path, limits: limits, diskCacheError: error)
    }

    private init(diskCache: DiskCache?, path: String?, limits: ImageCacheLimits, diskCacheError: KVCacheError?) {
        self.diskCache = diskCache
        self.diskCacheError = diskCacheError
        self.path = diskCache?.path ?? path ?? ""
        // A memory-only cache has nothing to share a folder's queue with.
        ioQueue = diskCache.map { ImageCache.ioQueue(forPath: $0.path) } ?? DispatchQueue(label: "webimage.cache.io")
        memoryCache = MemoryCache(name: "webimage.images")
        memoryCache.ageLimit = 12 * 60 * 60
        memoryCache.costLimit = limits.memoryCostLimit
        let derived = ImageCacheLimits.entryCostLimit(forCostLimit: limits.memoryCostLimit)
        settings.withLock { $0.memoryEntryCostLimit = limits.memoryEntryCostLimit == derived ? nil : limits.memoryEntryCostLimit }
        guard let diskCache else { return }
        diskCache.costLimit = limits.diskCostLimit
        diskCache.ageLimit = limits.diskAgeLimit
        diskCache.freeDiskSpaceLimit = limits.diskFreeSpaceLimit
    }

    /// The cost of an image in the memory cache: the bytes it holds now, its pixels and the encoded original
    /// it keeps (`Image.originalData`: a thumbnail that kept its 700 KB original counted 0.01 MB of pixels).
    static func cost(of image: Image) -> Int { image.decodedByteCount + (image.originalData?.count ?? 0) }

    /// Keeps `image` in memory unless it costs (with its key) more than `memoryEntryCostLimit` or the whole
    /// `memoryCache.costLimit`, or its key is longer than the disk cache's `keyLengthLimit` (then an older image
    /// under the key is dropped, so the key never serves a stale one). Returns whether it was kept. Every kept
    /// variant is listed in the index of variants.
    @discardableResult
    func storeInMemory(_ image: Image, forKey key: ImageCacheKey) -> Bool {
        let cost = Self.cost(of: image) + key.byteCount
        guard cost <= memoryEntryCostLimit, cost <= memoryCache.costLimit,
              isCacheableKey(key.key) else {
            memoryCache.removeObject(forKey: key)
            return false
        }
        memoryCache.setObject(image, forKey: key, cost: cost)
        // After the set: a removal racing this store either sees the entry listed and removes it, or runs
        // before it is listed (then this store counts as the later one and the entry stays, listed).
        indexVariant(key)
        return true
    }

    // MARK: Store

    /// Stores an image and/or its bytes.
    ///
    /// - Parameters:
    ///   - image: the decoded image for memory (`nil`: decode `imageData` for memory only if `type` has `.memory`).
    ///   - imageData: the original bytes for disk (`nil`: encode `image` — PNG with alpha, else JPEG 0.9).
    ///   - key: the cache key (the manager uses the URL string after `cacheKeyFilter`).
    ///   - type: which caches to write: `.memory`, `.disk` or `.all` (the default).
    ///   - metadata: kept beside the bytes on disk. Default: the image's scale, no HTTP facts.
    /// - Throws: `WebImageError.cacheFailed` for a disk failure, `.decodeFailed` when bytes alone were given
    ///   for memory and do not decode.
    public func setImage(_ image: Image?, imageData: Data? = nil, forKey key: String, type: ImageCacheType = .all,
                         metadata: ImageCacheMetadata? = nil) throws(WebImageError) {
        guard image != nil || imageData != nil else { return }
        if type.contains(.memory) {
            let memoryImage: Image
            var memoryKey = ImageCacheKey(key)
            if let image {
                memoryImage = image
            } else if let imageData {
                // Decoded with this cache's settings: a reduced variant goes under its own key (DecodeVariant).
                let variant = DecodeVariant(options: [], cache: self)
                memoryKey = ImageCacheKey(key, variant: variant)
                do { memoryImage = try decode(imageData, scale: metadata?.scale ?? 1, variant: variant) } catch {
                    throw .decodeFailed(error as? ImageCodecError ?? .corruptData(format: .unknown, message: "\(error)"))
                }
            } else { return }
            storeInMemory(memoryImage, forKey: memoryKey)
        }
        if type.contains(.disk), let diskCache {
            waitForPendingWrites()
            let bytes: Data
            if let imageData {
                bytes = imageData
            } else if let image {
                do { bytes = try image.encoded(as: image.hasAlpha ? .png : .jpeg, quality: 0.9) } catch {
                    throw .decodeFailed(error as? ImageCodecError ?? .encodingFailed(format: .png, message: "\(error)"))
                }
            } else { return }
            let meta = metadata ?? ImageCacheMetadata(scale: image?.scale ?? 1)
            do {
                try diskCache.setObject(bytes, forKey: key, extendedData: try meta.encoded())
            } catch let error as KVCacheError {
                throw .cacheFailed(error)
            } catch {
                throw .cacheFailed(.archiving("\(error)"))
            }
        }
    }

    // MARK: Read

    /// The image for `key`: memory first; then disk, decoded and promoted to memory.
    ///
    /// - Throws: `WebImageError.cacheFailed` for a disk failure. Bytes on disk that no longer decode are removed
    ///   and reported as a miss (logged), so a corrupt entry heals itself.
    public func getImage(forKey key: String, type: ImageCacheType = .all) throws(WebImageError) -> Image? {
        // The variant this cache's settings make (`allowAnimatedImage`, `decodeForDisplay`): what a plain request
        // through the manager stores, and what a promotion below stores.
        let variant = DecodeVariant(options: [], cache: self)
        if type.contains(.memory), let image = memoryCache.object(forKey: ImageCacheKey(key, variant: variant)) { return image }
        guard type.contains(.disk), let diskCache else { return nil }
        waitForPendingWrites()
        let item: KVStorageItem?
        do { item = try diskCache.entry(forKey: key) } catch { throw .cacheFailed(error) }
        guard let item else { return nil }
        let metadata = ImageCacheMetadata.decode(item.extendedData)
        let image: Image
        do {
            image = try decode(item.value, scale: metadata?.scale ?? 1, variant: variant)
        } catch {
            WebImageLog.logger.warning("removing undecodable disk cache entry", metadata: ["key": "\(key)", "error": "\(error)"])
            do { try diskCache.removeObject(forKey: key) } catch { throw .cacheFailed(error) }
            return nil
        }
        if type.contains(.memory) {
            // A reduced variant (cache settings) goes under its own key: the plain key always holds the full image.
            storeInMemory(image, forKey: ImageCacheKey(key, variant: variant))
        }
        return image
    }

    /// The original bytes for `key` from disk, or `nil`.
    public func getImageData(forKey key: String) throws(WebImageError) -> Data? {
        guard let diskCache else { return nil }
        waitForPendingWrites()
        do { return try diskCache.object(forKey: key) } catch { throw .cacheFailed(error) }
    }

    /// The disk entry's metadata (scale, HTTP facts), or `nil`.
    public func getMetadata(forKey key: String) throws(WebImageError) -> ImageCacheMetadata? {
        guard let diskCache else { return nil }
        waitForPendingWrites()
        do { return ImageCacheMetadata.decode(try diskCache.extendedData(forKey: key)) } catch { throw .cacheFailed(error) }
    }

    /// Replaces the disk entry's metadata (e.g. after a 304 refreshed its validators). Returns whether the
    /// entry existed.
    @discardableResult
    public func setMetadata(_ metadata: ImageCacheMetadata, forKey key: String) throws(WebImageError) -> Bool {
        guard let diskCache else { return false }
        waitForPendingWrites()
        do {
            return try diskCache.setExtendedData(try metadata.encoded(), forKey: key)
        } catch let error as KVCacheError {
            throw .cacheFailed(error)
        } catch {
            throw .cacheFailed(.archiving("\(error)"))
        }
    }

    /// Whether `key` is cached at the given levels (in memory: any decoded image of it — all frames or the
    /// first, decoded for display or straight alpha, any thumbnail size, any transform: what
    /// `removeImage(forKey:)` removes).
    public func containsImage(forKey key: String, type: ImageCacheType = .all) throws(WebImageError) -> Bool {
        if type.contains(.memory), memoryVariants(of: key).contains(where: { memoryCache.containsObject(forKey: $0) }) {
            return true
        }
        guard type.contains(.disk), let diskCache else { return false }
        waitForPendingWrites()
        do { return try diskCache.containsObject(forKey: key) } catch { throw .cacheFailed(error) }
    }

    /// Removes `key` from the given levels (in memory: every decoded image of it — each decode variant, each
    /// thumbnail size, each transform).
    public func removeImage(forKey key: String, type: ImageCacheType = .all) throws(WebImageError) {
        if type.contains(.memory) { removeFromMemory(forKey: key) }
        if type.contains(.disk), let diskCache {
            waitForPendingWrites()
            do { try diskCache.removeObject(forKey: key) } catch { throw .cacheFailed(error) }
        }
    }

    /// Removes every decoded image of `key` from memory (each decode variant, thumbnail size and transform) and
    /// forgets its freshness. Never blocks on the disk.
    func removeFromMemory(forKey key: String) {
        for variant in takeMemoryVariants(of: key) { memoryCache.removeObject(forKey: variant) }
        freshness.remove(key)
    }

    // MARK: Decoding

    /// Decodes bytes with this cache's settings.
    func decode(_ data: Data, scale: Double, variant: DecodeVariant? = nil, options extra: DecodeOptions? = nil) throws -> Image {
        let variant = variant ?? DecodeVariant(options: [], cache: self)
        var options = extra ?? DecodeOptions()
        if variant.isFirstFrameOnly { options.firstFrameOnly = true }
        if variant.isStraightAlpha { options.pixelFormat = .rgba8 }
        options.colorManagement = variant.colorManagement
        let image = try ImageDecoder.decode(data, options: options)
        return image.withScale(scale)
    }
}

extension Image {
    /// This image with another scale (still images only: an animation keeps its own, documented on
    /// `ImageCacheMetadata.scale`).
    func withScale(_ scale: Double) -> Image {
        guard scale != self.scale, scale > 0, !isAnimated else { return self }
        return Image(frames: [firstFrame], format: format, loopCount: loopCount, storedLoopCount: storedLoopCount,
                     hasAlpha: hasAlpha, isProgressive: isProgressive, isPartial: isPartial, scale: scale,
                     orientation: orientation, originalData: originalData, colorSpace: colorSpace,
                     pixelICCProfile: pixelICCProfile)
    }
}
