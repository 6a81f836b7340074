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
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(info.f_bavail).multipliedReportingOverflow(by: Int64(info.f_frsize))
        return overflow ? .max : bytes
    }
}
