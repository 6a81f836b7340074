import Foundation

/// A `MemoryCache` in front of a `DiskCache` under one folder (YYCache): reads check memory, then disk,
/// and promote disk hits to memory; writes go to both.
///
/// ```swift
/// let cache = try Cache<Data>(path: "/var/cache/app/thumbnails")
/// try cache.setObject(bytes, forKey: "k")
/// let hit = try cache.object(forKey: "k")   // memory, else disk
/// ```
///
/// - Important: Thread-safe. Synchronous methods touch the disk on the calling thread when memory misses;
///   the `async` variants run disk work on the disk cache's background queue.
public final class Cache<Value: Sendable>: Sendable {
    /// The memory layer (tune its limits directly).
    public let memoryCache: MemoryCache<String, Value>
    /// The disk layer (tune its limits directly).
    public let diskCache: DiskCache
    /// How values become bytes on disk and back.
    public let archiver: DiskCacheArchiver<Value>
    /// The memory cost of a value promoted from disk, from its archived bytes. The byte count by default.
    public let promotionCost: @Sendable (Value, Data) -> Int

    /// Opens the cache in the folder at `path`.
    ///
    /// - Parameters:
    ///   - path: The disk cache's folder (shared with any live `DiskCache` for it in this process).
    ///   - inlineThreshold: See `DiskCache.init(path:inlineThreshold:)`; 20 KB by default.
    ///   - archiver: Turns values into bytes and back.
    ///   - promotionCost: The memory cost of a value read from disk; its byte count by default.
    public init(
        path: String, inlineThreshold: Int = DiskCache.defaultInlineThreshold, archiver: DiskCacheArchiver<Value>,
        promotionCost: @escaping @Sendable (Value, Data) -> Int = { $1.count }
    ) throws(KVCacheError) {
        diskCache = try DiskCache(path: path, inlineThreshold: inlineThreshold)
        memoryCache = MemoryCache(name: path)
        self.archiver = archiver
        self.promotionCost = promotionCost
    }

    /// Whether `key` is in memory or on disk.
    public func containsObject(forKey key: String) throws(KVCacheError) -> Bool {
        if memoryCache.containsObject(forKey: key) { return true }
        return try diskCache.containsObject(forKey: key)
    }

    /// The value for `key` from memory, else from disk (then kept in memory too), else `nil`.
    public func object(forKey key: String) throws(KVCacheError) -> Value? {
        if let value = memoryCache.object(forKey: key) { return value }
        guard let data = try diskCache.object(forKey: key) else { return nil }
        let value = try archiver.unarchived(data)
        memoryCache.setObject(value, forKey: key, cost: promotionCost(value, data))
        return value
    }

    /// Stores `value` in memory (with `cost`, 0 by default) and on disk. A `nil` value removes.
    ///
    /// - Throws: `.keyTooLong` for a key over the disk cache's `keyLengthLimit`, storing nothing (in memory
    ///   either); else the disk write's `KVCacheError` (the value is in memory then).
    public func setObject(_ value: Value?, forKey key: String, cost: Int = 0) throws(KVCacheError) {
        guard let value else { return try removeObject(forKey: key) }
        try diskCache.core.checkSizes(key: key, extendedData: nil)
        memoryCache.setObject(value, forKey: key, cost: cost)
        try diskCache.setObject(try archiver.archived(value), forKey: key)
    }

    /// Removes `key` from memory and disk.
    public func removeObject(forKey key: String) throws(KVCacheError) {
        memoryCache.removeObject(forKey: key)
        try diskCache.removeObject(forKey: key)
    }

    /// Empties memory and disk; `progress(removed, total)` reports the disk part.
    public func removeAllObjects(progress: ((Int, Int) -> Void)? = nil) throws(KVCacheError) {
        memoryCache.removeAllObjects()
        try diskCache.removeAllObjects(progress: progress)
    }

    /// `object(forKey:)` with the disk read off the caller's thread.
    public func object(forKey key: String) async throws(KVCacheError) -> Value? {
        if let value = memoryCache.object(forKey: key) { return value }
        guard let data = try await diskCache.object(forKey: key) else { return nil }
        let value = try archiver.unarchived(data)
        memoryCache.setObject(value, forKey: key, cost: promotionCost(value, data))
        return value
    }

    /// `setObject(_:forKey:cost:)` with the disk write off the caller's thread.
    public func setObject(_ value: Value?, forKey key: String, cost: Int = 0) async throws(KVCacheError) {
        guard let value else { return try await removeObject(forKey: key) }
        try diskCache.core.checkSizes(key: key, extendedData: nil)
        memoryCache.setObject(value, forKey: key, cost: cost)
        try await diskCache.setObject(try archiver.archived(value), forKey: key)
    }

    /// `removeObject(forKey:)` with the disk work off the caller's thread.
    public func removeObject(forKey key: String) async throws(KVCacheError) {
        memoryCache.removeObject(forKey: key)
        try await diskCache.removeObject(forKey: key)
    }
}

extension Cache where Value == Data {
    /// A cache of bytes in the folder at `path`.
    public convenience init(path: String, inlineThreshold: Int = DiskCache.defaultInlineThreshold) throws(KVCacheError) {
        try self.init(path: path, inlineThreshold: inlineThreshold, archiver: .data)
    }
}
