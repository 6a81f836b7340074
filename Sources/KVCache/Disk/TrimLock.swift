#if canImport(Glibc)
import Glibc
#endif

/// The advisory lock that lets only one process trim a folder at a time (`flock` on `trim.lock`).
///
/// - Important: Not thread-safe; create, use and release on one thread.
struct TrimLock {
    private let descriptor: Int32

    /// Takes the lock without waiting; `nil` when another process (or handle) holds it.
    init?(path: String) throws(KVCacheError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open trim lock", path: path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK || code == EINTR { return nil }
            throw .io(errno: code, operation: "flock trim lock", path: path)
        }
        descriptor = fd
    }

    /// Releases the lock (closing the descriptor drops the `flock`).
    func release() { close(descriptor) }
}

/// Free space of the file system holding a path (`statvfs`).
enum FreeDiskSpace {
    /// Bytes available to unprivileged users, or `nil` if `statvfs` fails.
    static func bytes(atPath path: String) -> Int64? {
        volume(atPath: path)?.available
    }

    /// The volume's bytes available to unprivileged users and its size, or `nil` if `statvfs` fails.
    static func volume(atPath path: String) -> (available: Int64, size: Int64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (available, overflow1) = Int64(info.f_bavail).multipliedReportingOverflow(by: Int64(info.f_frsize))
        let (size, overflow2) = Int64(info.f_blocks).multipliedReportingOverflow(by: Int64(info.f_frsize))
        return (overflow1 ? .max : available, overflow2 ? .max : size)
    }

    /// The free space a trim keeps on a volume of `volumeSize` bytes: `limit`, but at most `share` of the
    /// volume (so a 1 GiB floor does not empty the cache at every trim of a 4 GiB SD card or a small
    /// container overlay).
    static func floor(limit: Int64, volumeSize: Int64, share: Double) -> Int64 {
        guard limit > 0 else { return 0 }
        guard share < 1, volumeSize > 0 else { return limit }
        let proportional = Double(volumeSize) * max(0, share)
        return proportional < Double(limit) ? Int64(proportional) : limit
    }
}
