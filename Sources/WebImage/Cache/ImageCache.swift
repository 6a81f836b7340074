import Foundation
import ImageCodec
import KVCache
import Logging

/// Decoded images in memory and their original bytes on disk, under one path (YYImageCache).
///
/// - Memory: a `MemoryCache` of decoded `Image`s; cost = decoded bytes held; cost limit 15 % of the process's
///   memory (cgroup-aware), at most 768 MB; an image over 10 % of that is not kept; age limit 12 h; auto-trim
///   every 5 s (`ImageCacheLimits`).
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
    /// Decoded images by key.
    public let memoryCache: MemoryCache<String, Image>
    /// Original bytes by key.
    public let diskCache: DiskCache
    /// Where the disk cache lives.
    public var path: String { diskCache.path }
    /// Serial queue for the pipeline's disk lookups and background writes, one per folder in the process (so
    /// every `ImageCache` on a path shares it): a lookup never overtakes a write queued before it.
    let ioQueue: DispatchQueue
    /// The optional shared tier after the disk (`ImageCache+SharedTier.swift`).
    let sharedSlot = SharedTierSlot()

    private let settings = Mutex(Settings())
    private struct Settings {
        var allowAnimatedImage = true
        var decodeForDisplay = true
        var colorManagement = ColorManagement.sRGB
        var memoryEntryCostLimit = Int.max
    }

    /// The largest cost (decoded bytes) of one image kept in memory: a larger image is still delivered, but not
    /// cached in memory. Default 10 % of the memory cache's cost limit (`ImageCacheLimits`).
    public var memoryEntryCostLimit: Int {
        get { settings.withLock { $0.memoryEntryCostLimit } }
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
    /// - Parameter limits: memory and disk limits. Default `ImageCacheLimits.default` (bounded; see there).
    /// - Throws: `KVCacheError` when the folder or its database cannot be created.
    public init(path: String = ImageCache.defaultPath(), limits: ImageCacheLimits = .default) throws(KVCacheError) {
        diskCache = try DiskCache(path: path)
        ioQueue = ImageCache.ioQueue(forPath: diskCache.path)
        memoryCache = MemoryCache(name: "webimage.images")
        memoryCache.ageLimit = 12 * 60 * 60
        memoryCache.costLimit = limits.memoryCostLimit
        settings.withLock { $0.memoryEntryCostLimit = limits.memoryEntryCostLimit }
        diskCache.costLimit = limits.diskCostLimit
        diskCache.ageLimit = limits.diskAgeLimit
        diskCache.freeDiskSpaceLimit = limits.diskFreeSpaceLimit
    }

    /// The cost of an image in the memory cache: the bytes of pixels it holds now.
    static func cost(of image: Image) -> Int { image.decodedByteCount }

    /// Keeps `image` in memory unless it costs more than `memoryEntryCostLimit` (then an older image under the
    /// key is dropped, so the key never serves a stale one). Returns whether it was kept.
    @discardableResult
    func storeInMemory(_ image: Image, forKey key: String) -> Bool {
        let cost = Self.cost(of: image)
        guard cost <= memoryEntryCostLimit else {
            memoryCache.removeObject(forKey: key)
            return false
        }
        memoryCache.setObject(image, forKey: key, cost: cost)
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
            var memoryKey = key
            if let image {
                memoryImage = image
            } else if let imageData {
                // Decoded with this cache's settings: a reduced variant goes under its own key (DecodeVariant).
                let variant = DecodeVariant(options: [], cache: self)
                memoryKey += variant.keySuffix
                do { memoryImage = try decode(imageData, scale: metadata?.scale ?? 1, variant: variant) } catch {
                    throw .decodeFailed(error as? ImageCodecError ?? .corruptData(format: .unknown, message: "\(error)"))
                }
            } else { return }
            storeInMemory(memoryImage, forKey: memoryKey)
        }
        if type.contains(.disk) {
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
        if type.contains(.memory), let image = memoryCache.object(forKey: key + variant.keySuffix) { return image }
        guard type.contains(.disk) else { return nil }
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
            storeInMemory(image, forKey: key + variant.keySuffix)
        }
        return image
    }

    /// The original bytes for `key` from disk, or `nil`.
    public func getImageData(forKey key: String) throws(WebImageError) -> Data? {
        waitForPendingWrites()
        do { return try diskCache.object(forKey: key) } catch { throw .cacheFailed(error) }
    }

    /// The disk entry's metadata (scale, HTTP facts), or `nil`.
    public func getMetadata(forKey key: String) throws(WebImageError) -> ImageCacheMetadata? {
        waitForPendingWrites()
        do { return ImageCacheMetadata.decode(try diskCache.extendedData(forKey: key)) } catch { throw .cacheFailed(error) }
    }

    /// Replaces the disk entry's metadata (e.g. after a 304 refreshed its validators). Returns whether the
    /// entry existed.
    @discardableResult
    public func setMetadata(_ metadata: ImageCacheMetadata, forKey key: String) throws(WebImageError) -> Bool {
        waitForPendingWrites()
        do {
            return try diskCache.setExtendedData(try metadata.encoded(), forKey: key)
        } catch let error as KVCacheError {
            throw .cacheFailed(error)
        } catch {
            throw .cacheFailed(.archiving("\(error)"))
        }
    }

    /// Whether `key` is cached at the given levels (in memory: any decoded variant of it — all frames or the first,
    /// decoded for display or straight alpha).
    public func containsImage(forKey key: String, type: ImageCacheType = .all) throws(WebImageError) -> Bool {
        if type.contains(.memory),
           DecodeVariant.allKeySuffixes.contains(where: { memoryCache.containsObject(forKey: key + $0) }) {
            return true
        }
        guard type.contains(.disk) else { return false }
        waitForPendingWrites()
        do { return try diskCache.containsObject(forKey: key) } catch { throw .cacheFailed(error) }
    }

    /// Removes `key` from the given levels (in memory: every decoded variant of it).
    public func removeImage(forKey key: String, type: ImageCacheType = .all) throws(WebImageError) {
        if type.contains(.memory) {
            for suffix in DecodeVariant.allKeySuffixes { memoryCache.removeObject(forKey: key + suffix) }
        }
        if type.contains(.disk) {
            waitForPendingWrites()
            do { try diskCache.removeObject(forKey: key) } catch { throw .cacheFailed(error) }
        }
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
