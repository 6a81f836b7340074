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

    /// Keyed by the path's bytes: two paths that differ as bytes are two folders, even when Swift's
    /// `String ==` (canonical equivalence) calls them equal.
    private static let cores = Mutex<[ExactKey<String>: WeakCore]>([:])

    /// The live core for `path`, or a newly opened one. Entries of cores that died are dropped whenever a
    /// core is opened, so the map holds at most the live folders plus the ones that died since.
    static func core(path: String, inlineThreshold: Int) throws(KVCacheError) -> DiskCacheCore {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        return try cores.withLock { (cores: inout [ExactKey<String>: WeakCore]) throws(KVCacheError) -> DiskCacheCore in
            if let live = cores[ExactKey(key)]?.core { return live }
            cores = cores.filter { $0.value.core != nil }
            let core = try DiskCacheCore(path: key, inlineThreshold: inlineThreshold)
            cores[ExactKey(key)] = WeakCore(core: core)
            return core
        }
    }

    /// Entries in the map, live or not (tests).
    static var entryCount: Int { cores.withLock { $0.count } }
}
