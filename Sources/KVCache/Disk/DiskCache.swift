import Foundation

/// A thread-safe disk cache of bytes with LRU trimming by count, cost, age and free disk space
/// (YYDiskCache), over a `KVStorage` folder.
///
/// ```swift
/// let cache = try DiskCache(path: "/var/cache/app/images")
/// try cache.setObject(jpegBytes, forKey: url.absoluteString, extendedData: validators)
/// let bytes = try cache.object(forKey: url.absoluteString)
/// ```
///
/// Values up to `inlineThreshold` bytes live in the SQLite manifest, larger ones in files named by the MD5
/// of the key (or `filename`'s choice). `DiskCache(path:)` shares one live instance per folder in the
/// process: every handle for a path sees the same store and limits. Several processes may use one folder:
/// reads and writes stay correct, and only one process trims at a time. Consecutive reads share one SQLite
/// read snapshot, renewed whenever any process commits (see `KVStorage`); a background check ends a
/// snapshot once it is 50 ms old (within about 100 ms), so an idle process never holds back the others'
/// WAL checkpoints. Checkpoints themselves run outside the store lock: on a background queue, and between
/// the steps of a trim (see KVStorage+Checkpoint.swift).
///
/// - Important: Thread-safe. Synchronous methods do disk I/O on the calling thread (the store is serialised
///   by a lock); the completion-handler and `async` variants run on a background queue.
public final class DiskCache: Sendable {
    let core: DiskCacheCore

    /// Opens the disk cache in the folder at `path`, or returns a handle to the one already live in this
    /// process (then `inlineThreshold` is that instance's, not this argument).
    ///
    /// - Parameters:
    ///   - path: The folder; created if missing, with its missing parents, each owner-only (0700).
    ///   - inlineThreshold: Values of at most this many bytes are kept inline in SQLite, larger ones in
    ///     files. 20 KB by default (see `defaultInlineThreshold`). `0` keeps every value
    ///     in a file, `Int.max` every value in SQLite.
    /// - Throws: `KVCacheError` when the folder or its manifest cannot be used.
    public init(path: String, inlineThreshold: Int = DiskCache.defaultInlineThreshold) throws(KVCacheError) {
        core = try DiskCacheRegistry.core(path: path, inlineThreshold: inlineThreshold)
    }

    /// Releases this handle. The release of the last handle for a folder closes its store on this thread
    /// (after its running background task ends): once it returns, nothing of the cache touches the folder,
    /// which may then be removed or opened anew.
    deinit { DiskCacheRegistry.releaseHandle(of: core) }

    /// The default `inlineThreshold`: 20 KB, checked against the value-size sweep of the `kvcache` benchmark:
    /// writes inline in SQLite beat writes to files at every size measured, and inline reads (sharing one
    /// snapshot) beat file reads up to 32 KB and fall behind from 64 KB. 20 KB keeps every inline value on the
    /// fast side of that crossover with margin, and keeps the manifest file small (a trim gives its freed pages
    /// back, KVStorage+Vacuum.swift; a manifest made before schema 3 only reuses them).
    public static let defaultInlineThreshold = 20 * 1024

    /// The folder (standardized).
    public var path: String { core.path }

    /// Values of at most this many bytes are kept in SQLite, larger ones in files.
    public var inlineThreshold: Int { core.inlineThreshold }

    /// What went wrong and was repaired, at open or later (a damaged manifest rebuilt, a missing manifest),
    /// else `nil`. See "Recovery" in the README.
    public var recoveryError: KVCacheError? { core.storage.withLock { $0.recoveryError } }

    // MARK: Limits

    /// The maximum number of values. No limit by default. Enforced by the background trim.
    public var countLimit: Int {
        get { core.limits.withLock { $0.countLimit } }
        set { core.limits.withLock { $0.countLimit = max(0, newValue) } }
    }

    /// The maximum total cost in bytes. No limit by default. Enforced by the background trim.
    ///
    /// An entry costs what it holds on disk: its value (a value file rounded up to whole 4 KiB blocks), its key
    /// three times (the manifest row, the key index, an access-log row), its extended data and 128 bytes of
    /// row overhead (see `totalCost()`). After a trim the manifest gives the pages it freed back to the file
    /// system, so the folder's size follows the limit (a manifest made before version 3 of the schema does
    /// not shrink).
    public var costLimit: Int64 {
        get { core.limits.withLock { $0.costLimit } }
        set { core.limits.withLock { $0.costLimit = max(0, newValue) } }
    }

    /// The maximum age in seconds since a value was last read or written. No limit by default.
    public var ageLimit: Double {
        get { core.limits.withLock { $0.ageLimit } }
        set { core.limits.withLock { $0.ageLimit = max(0, newValue) } }
    }

    /// The free disk space to keep, in bytes: the background trim removes values while free space is below
    /// it (at most `freeDiskSpaceVolumeShare` of the volume's size), and logs why at info. 0 (off) by default.
    public var freeDiskSpaceLimit: Int64 {
        get { core.limits.withLock { $0.freeDiskSpaceLimit } }
        set { core.limits.withLock { $0.freeDiskSpaceLimit = max(0, newValue) } }
    }

    /// The largest share of its volume's size the free-space floor may be: a 1 GiB floor on a 4 GiB SD card
    /// or a small container overlay is 5 % of it (205 MB), not a floor that empties the cache at every trim.
    /// `defaultFreeDiskSpaceVolumeShare` (0.05) by default; 1 keeps `freeDiskSpaceLimit` as it is.
    public var freeDiskSpaceVolumeShare: Double {
        get { core.limits.withLock { $0.freeDiskSpaceVolumeShare } }
        set { core.limits.withLock { $0.freeDiskSpaceVolumeShare = min(1, max(0, newValue.isNaN ? 1 : newValue)) } }
    }

    /// The default `freeDiskSpaceVolumeShare`: 5 %.
    public static let defaultFreeDiskSpaceVolumeShare = 0.05

    /// The longest key accepted, in UTF-8 bytes: a save with a longer key throws `.keyTooLong` and stores
    /// nothing. 8 KiB by default (`defaultKeyLengthLimit`); at least 1. Thread-safe.
    public var keyLengthLimit: Int {
        get { core.limits.withLock { $0.keyLengthLimit } }
        set { core.limits.withLock { $0.keyLengthLimit = max(1, newValue) } }
    }

    /// The largest extended data accepted, in bytes: a save (or `setExtendedData`) with more throws
    /// `.extendedDataTooLarge` and changes nothing. 16 KiB by default (`defaultExtendedDataSizeLimit`); at
    /// least 0. Thread-safe.
    public var extendedDataSizeLimit: Int {
        get { core.limits.withLock { $0.extendedDataSizeLimit } }
        set { core.limits.withLock { $0.extendedDataSizeLimit = max(0, newValue) } }
    }

    /// The default `keyLengthLimit`: 8 KiB, the request-line limit of common HTTP servers and CDNs, so any URL
    /// that can be fetched fits. A key is stored three times per entry (see `costLimit`).
    public static let defaultKeyLengthLimit = 8 * 1024

    /// The default `extendedDataSizeLimit`: 16 KiB, twice the common limit of one HTTP header line (the
    /// validators `ImageCache` keeps there come from headers).
    public static let defaultExtendedDataSizeLimit = 16 * 1024

    /// Seconds between background trims (at least 0.01). 60 s by default. A change takes effect at once: the
    /// next trim runs one new interval after the last one (or the open), at once if that is past; setting it
    /// again, to the same or another value, never puts the next trim further off than that. The trims run on a
    /// serial queue of this folder's own, never on a global queue. Thread-safe.
    public var autoTrimInterval: Double {
        get { core.limits.withLock { $0.autoTrimInterval } }
        set { core.setAutoTrimInterval(newValue) }
    }

    /// Names the value file of a key (unique per key; not empty, no `/` or NUL, not `.` or `..`: a save whose
    /// name breaks this throws `.invalidArgument`). `nil` (the MD5 of the key in hex) by default.
    public var filename: (@Sendable (String) -> String)? {
        get { core.limits.withLock { $0.filename } }
        set {
            // The old closure (and what it captures: maybe the last handle of a cache, whose release closes
            // it) is freed here, after the lock, never under it.
            let replaced = core.limits.withLock { limits in
                defer { limits.filename = newValue }
                return limits.filename
            }
            withExtendedLifetime(replaced) {}
        }
    }

    // MARK: Synchronous API

    /// Whether a value is stored for `key`. Does not read the value.
    public func containsObject(forKey key: String) throws(KVCacheError) -> Bool {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.containsItem(forKey: key) }
    }

    /// The bytes stored for `key`, or `nil`. Counts as an access for LRU trimming.
    public func object(forKey key: String) throws(KVCacheError) -> Data? {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.itemValue(forKey: key) }
    }

    /// The entry (value, extended data, times) for `key`, or `nil`. Counts as an access.
    public func entry(forKey key: String) throws(KVCacheError) -> KVStorageItem? {
        let item = try core.withStorage { (storage) throws(KVCacheError) in try storage.item(forKey: key) }
        return item
    }

    /// The extended data stored beside the value for `key`, or `nil`. Does not read the value.
    public func extendedData(forKey key: String) throws(KVCacheError) -> Data? {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.itemInfo(forKey: key)?.extendedData }
    }

    /// Stores `data` for `key` with optional extended data (e.g. image scale, HTTP validators), replacing
    /// any previous value. A `nil` value removes the entry.
    ///
    /// - Throws: `.keyTooLong` (a key over `keyLengthLimit`) or `.extendedDataTooLarge` (over
    ///   `extendedDataSizeLimit`), storing nothing and keeping any previous value; else `KVCacheError` of the
    ///   write.
    public func setObject(_ data: Data?, forKey key: String, extendedData: Data? = nil) throws(KVCacheError) {
        guard let data else { return try removeObject(forKey: key) }
        try core.checkSizes(key: key, extendedData: extendedData)
        let filename = data.count > core.inlineThreshold || core.inlineThreshold == 0 ? core.filename(forKey: key) : nil
        let trashed = try core.withStorage { (storage) throws(KVCacheError) -> Bool in
            try storage.save(key: key, value: data, filename: filename, extendedData: extendedData)
            return storage.takeTrashFlag()
        }
        // Only a replaced file goes to trash; a sweep per write would cost a dispatch and a readdir.
        if trashed { core.scheduleEmptyTrash() }
    }

    /// Replaces the extended data of the value for `key`; returns whether the key was found.
    ///
    /// - Throws: `.extendedDataTooLarge` (over `extendedDataSizeLimit`), changing nothing.
    @discardableResult
    public func setExtendedData(_ extendedData: Data?, forKey key: String) throws(KVCacheError) -> Bool {
        try core.checkSizes(key: "", extendedData: extendedData)
        return try core.withStorage { (storage) throws(KVCacheError) in try storage.setExtendedData(extendedData, forKey: key) }
    }

    /// Removes the value for `key`, if any.
    public func removeObject(forKey key: String) throws(KVCacheError) {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.removeItem(forKey: key) }
        core.scheduleEmptyTrash()
    }

    /// Removes every value, calling `progress(removed, total)` after each batch (on this thread).
    ///
    /// Every value stored when the call began is removed; values stored meanwhile (by other threads or
    /// processes) may survive. Batches of 64 each hold the store's lock; `progress` runs between them with
    /// no lock held, so it may use this cache (from this thread or another).
    public func removeAllObjects(progress: ((Int, Int) -> Void)? = nil) throws(KVCacheError) {
        defer { core.scheduleEmptyTrash() }
        let (total, bound) = try core.withStorage { (storage) throws(KVCacheError) in try storage.beginRemoveAll() }
        var removed = 0
        while true {
            let batch = try core.withStorage { (storage) throws(KVCacheError) -> Int in
                try storage.removeBatch(upToRowID: bound, limit: KVStorage.removeAllBatchSize)
            }
            if batch == 0 { break }
            removed += batch
            progress?(min(removed, total), max(total, removed))
        }
    }

    /// The number of values. O(1): a counter the manifest keeps exact in every transaction (any process).
    public func totalCount() throws(KVCacheError) -> Int {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.itemsCount() }
    }

    /// The total cost in bytes, what `costLimit` counts: the values (files rounded up to 4 KiB blocks), keys
    /// (three times each), extended data and 128 bytes per entry. O(1), like `totalCount()`. The values alone
    /// are `usage().totalBytes`.
    public func totalCost() throws(KVCacheError) -> Int64 {
        try core.withStorage { (storage) throws(KVCacheError) in try storage.itemsCost() }
    }

    /// Removes least recently used values until at most `count` remain.
    public func trim(toCount count: Int) throws(KVCacheError) {
        try core.trim(to: TrimLimits(maxCount: count))
    }

    /// Removes least recently used values until they cost at most `cost` bytes in total (see `totalCost()`),
    /// then gives the manifest's freed pages back to the file system.
    public func trim(toCost cost: Int64) throws(KVCacheError) {
        try core.trim(to: TrimLimits(maxSize: cost))
    }

    /// Removes values not read or written for more than `age` seconds.
    public func trim(toAge age: Double) throws(KVCacheError) {
        try core.trim(to: TrimLimits(accessedBefore: Date(timeIntervalSinceNow: -max(0, age))))
    }

    /// Trims to every limit now (what the background trim does every `autoTrimInterval`), unless another
    /// process is trimming this folder. First frees what instances that died beside this one left (their
    /// slots, temporaries and journaled moves), so a long-running cache with no new opener beside it
    /// reclaims them too. Any thread; blocks the caller for the trim.
    public func trimToLimits() throws(KVCacheError) { try core.trimToLimits() }
}
