import Foundation
import Synchronization

/// The process-wide map from a folder to its live `DiskCacheCore` (YYDiskCache's global instance map).
/// Holds cores weakly: a core lives while some `DiskCache` handle uses it.
///
/// - Important: Thread-safe (a `Mutex`); a core is opened while the map is locked, so two threads asking for
///   one path share one core.
enum DiskCacheRegistry {
    private struct WeakCore {
        weak var core: DiskCacheCore?
    }

    private static let cores = Mutex<[String: WeakCore]>([:])

    /// The live core for `path`, or a newly opened one.
    static func core(path: String, inlineThreshold: Int) throws(KVCacheError) -> DiskCacheCore {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        return try cores.withLock { (cores: inout [String: WeakCore]) throws(KVCacheError) -> DiskCacheCore in
            if let live = cores[key]?.core { return live }
            let core = try DiskCacheCore(path: key, inlineThreshold: inlineThreshold)
            cores[key] = WeakCore(core: core)
            return core
        }
    }
}
