import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process-wide map from a folder to its live `DiskCacheCore` (YYDiskCache's global instance map), with
/// the number of `DiskCache` handles using each. A core is in the map exactly while some handle uses it;
/// the release of its last handle takes it out and closes it (`DiskCacheCore.close()`) before returning,
/// so a program that drops its handles may remove the folder at once.
///
/// - Important: Thread-safe (a `Mutex`); a core is opened while the map is locked, so two threads asking for
///   one path share one core. A close runs outside the map's lock: an open of the same folder meanwhile
///   gets a new core, a second instance of the folder beside the closing one (as another process would be).
enum DiskCacheRegistry {
    private struct Entry {
        let core: DiskCacheCore
        var handles: Int
    }

    /// Keyed by the path's bytes: two paths that differ as bytes are two folders, even when Swift's
    /// `String ==` (canonical equivalence) calls them equal.
    private static let cores = Mutex<[ExactKey<String>: Entry]>([:])

    /// The live core for `path`, or a newly opened one, counted as one more handle's. Each call must be
    /// balanced by one `releaseHandle(of:)`.
    static func core(path: String, inlineThreshold: Int) throws(KVCacheError) -> DiskCacheCore {
        let key = folderKey(path)
        return try cores.withLock { (cores: inout [ExactKey<String>: Entry]) throws(KVCacheError) -> DiskCacheCore in
            if let live = cores[ExactKey(key)] {
                cores[ExactKey(key)]?.handles += 1
                return live.core
            }
            let core = try DiskCacheCore(path: key, inlineThreshold: inlineThreshold)
            cores[ExactKey(key)] = Entry(core: core, handles: 1)
            return core
        }
    }

    /// Counts one handle of `core` released; for the last one, takes the core out of the map and closes it on
    /// the calling thread (waiting for its running background task, see `DiskCacheCore.close()`).
    static func releaseHandle(of core: DiskCacheCore) {
        let last = cores.withLock { cores -> Bool in
            let key = ExactKey(core.path)
            guard let entry = cores[key], entry.core === core else { return false }
            if entry.handles > 1 {
                cores[key]?.handles -= 1
                return false
            }
            cores[key] = nil
            return true
        }
        if last { core.close() }
    }

    /// Folders in the map (tests).
    static var entryCount: Int { cores.withLock { $0.count } }

    /// The handles counted for the folder at `path`, `nil` when it has no live core (tests).
    static func handles(forPath path: String) -> Int? {
        let key = folderKey(path)
        return cores.withLock { $0[ExactKey(key)]?.handles }
    }

    /// The folder `path` names, absolute, without `.`, empty components or a trailing `/`, as the kernel
    /// resolves it: a `..` goes up from where the components before it lead, symlinks followed (the real path
    /// of that prefix, when it exists), not lexically. `URL.standardizedFileURL` went up lexically unless the
    /// whole path existed, so `<a>/link/../new` opened `<a>/new`, a folder the caller never named
    /// (`DiskCachePathSpellingReviewTests`). Other symlinks are kept as spelled.
    static func folderKey(_ path: String) -> String {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        let absolute = path.utf8.first == slash ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [[UInt8]] = []
        func joined() -> String { parts.isEmpty ? "/" : String(decoding: parts.flatMap { [slash] + $0 }, as: UTF8.self) }
        for part in absolute.utf8.split(separator: slash, omittingEmptySubsequences: true).map(Array.init) {
            if part == [dot] { continue }
            if part == [dot, dot] {
                if let resolved = realpath(joined(), nil) {
                    defer { free(resolved) }
                    parts = String(cString: resolved).utf8.split(separator: slash, omittingEmptySubsequences: true).map(Array.init)
                }
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return joined()
    }
}
