/// The KVCache module: `MemoryCache`, `KVStorage`, `DiskCache` and `Cache` (YYCache for Linux).
public enum KVCacheModule {
    /// The module's version.
    public static let version = "0.1.0"
}
