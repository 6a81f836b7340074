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
/// - Important: Thread-safe (a `Mutex`, held only for map updates). A core is opened outside the lock, behind
///   a placeholder that makes every other opener of that folder wait for it, so two threads asking for one
///   path share one core; an open can wait without bound (for another process's exclusive open of the
///   folder, its crash cleanup), and neither the opens of other folders nor any release (every
///   `DiskCache.deinit`) waits for it (`DiskCacheRegistryOpenReviewTests`). A close runs outside the lock too:
///   an open of the same folder meanwhile gets a new core, a second instance of the folder beside the closing
///   one (as another process would be).
enum DiskCacheRegistry {
    private struct Entry {
        let core: DiskCacheCore
        var handles: Int
    }

    private enum Slot {
        /// A thread is opening the folder's core; the group is left when it is in the map or the open failed.
        case opening(DispatchGroup)
        case live(Entry)
    }

    /// Keyed by the path's bytes: two paths that differ as bytes are two folders, even when Swift's
    /// `String ==` (canonical equivalence) calls them equal.
    private static let cores = Mutex<[ExactKey<String>: Slot]>([:])

    /// The live core for `path`, or a newly opened one, counted as one more handle's. Each call must be
    /// balanced by one `releaseHandle(of:)`.
    static func core(path: String, inlineThreshold: Int) throws(KVCacheError) -> DiskCacheCore {
        let key = ExactKey(folderKey(path))
        enum Step { case live(DiskCacheCore), wait(DispatchGroup), open(DispatchGroup) }
        while true {
            let step = cores.withLock { cores -> Step in
                switch cores[key] {
                case .live(var entry)?:
                    entry.handles += 1
                    cores[key] = .live(entry)
                    return .live(entry.core)
                case .opening(let group)?:
                    return .wait(group)
                case nil:
                    let group = DispatchGroup()
                    group.enter()
                    cores[key] = .opening(group)
                    return .open(group)
                }
            }
            switch step {
            case .live(let core):
                return core
            case .wait(let group):
                // Then the core it opened, or (its open failed) an open of our own.
                group.wait()
            case .open(let group):
                defer { group.leave() }
                do throws(KVCacheError) {
                    let core = try DiskCacheCore(path: key.base, inlineThreshold: inlineThreshold)
                    cores.withLock { $0[key] = .live(Entry(core: core, handles: 1)) }
                    return core
                } catch {
                    cores.withLock { $0[key] = nil }
                    throw error
                }
            }
        }
    }

    /// Counts one handle of `core` released; for the last one, takes the core out of the map and closes it on
    /// the calling thread (waiting for its running background task, see `DiskCacheCore.close()`).
    static func releaseHandle(of core: DiskCacheCore) {
        let last = cores.withLock { cores -> Bool in
            let key = ExactKey(core.path)
            guard case .live(var entry)? = cores[key], entry.core === core else { return false }
            if entry.handles > 1 {
                entry.handles -= 1
                cores[key] = .live(entry)
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
        return cores.withLock { cores -> Int? in
            guard case .live(let entry)? = cores[ExactKey(key)] else { return nil }
            return entry.handles
        }
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
