/// The KVCache module: `MemoryCache`, `KVStorage`, `DiskCache` and `Cache` (YYCache for Linux).
///
/// - `MemoryCache<Key, Value>`: a thread-safe LRU map with count, cost and age limits.
/// - `KVStorage`: a SQLite manifest plus value files in one folder (not thread-safe; owned by `DiskCache`).
/// - `DiskCache`: one thread-safe disk cache per path in the process, safe to share between processes.
/// - `Cache<Value>`: a `MemoryCache` in front of a `DiskCache`.
public enum KVCacheModule {
    /// The module's version.
    public static let version = "0.2.0"
}
