/// The one error type of the KVCache module. It keeps the underlying cause: the SQLite result code and
/// message, the `errno` of a failed system call, and the path involved.
///
/// - Important: Values are plain data: `Sendable`, safe to pass between threads.
public enum KVCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A SQLite call failed. `code` is the extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …),
    /// `message` what `sqlite3_errmsg` said, `operation` what we were doing.
    case sqlite(code: Int32, message: String, operation: String)
    /// A system call on a file failed with `errno`.
    case io(errno: Int32, operation: String, path: String)
    /// The manifest could not be used (unopenable or corrupt) and was moved aside to `movedTo`; the store was
    /// recreated empty. Reported through `KVStorage.recoveryError`, not thrown.
    case manifestRecreated(cause: String, movedTo: String?)
    /// The manifest was missing while value files remained; they were treated as orphans and removed.
    case manifestMissing(orphanFiles: Int)
    /// A stored value did not match its manifest row (e.g. a file of the wrong size); the entry was removed.
    case corruptEntry(key: String, reason: String)
    /// The arguments cannot be honoured, e.g. a `.file` storage asked to save a value without a filename.
    case invalidArgument(String)
    /// A value could not be archived or unarchived by the caller's closures.
    case archiving(String)
    /// A key of `length` UTF-8 bytes is over the cache's limit (`DiskCache.keyLengthLimit`); nothing was stored.
    case keyTooLong(length: Int, limit: Int)
    /// Extended data of `size` bytes is over the cache's limit (`DiskCache.extendedDataSizeLimit`); nothing was
    /// stored.
    case extendedDataTooLarge(size: Int, limit: Int)

    /// Whether this is a SQLite error whose primary code is `SQLITE_BUSY` or `SQLITE_LOCKED`: another
    /// connection holds the lock. A busy database is never treated as corrupt.
    public var isBusy: Bool {
        if case .sqlite(let code, _, _) = self { return code & 0xFF == 5 || code & 0xFF == 6 }
        return false
    }

    /// A readable description with the cause.
    public var description: String {
        switch self {
        case .sqlite(let code, let message, let operation):
            return "SQLite error \(code) (\(message)) during \(operation)"
        case .io(let errno, let operation, let path):
            return "\(operation) failed for \(path): errno \(errno) (\(String(cString: strerror(errno))))"
        case .manifestRecreated(let cause, let movedTo):
            return "manifest unusable (\(cause)); moved aside to \(movedTo ?? "nowhere") and recreated"
        case .manifestMissing(let orphanFiles):
            return "manifest missing; \(orphanFiles) orphan value files removed"
        case .corruptEntry(let key, let reason):
            return "corrupt entry for key \(key): \(reason); removed"
        case .invalidArgument(let message):
            return "invalid argument: \(message)"
        case .archiving(let message):
            return "archiving failed: \(message)"
        case .keyTooLong(let length, let limit):
            return "key of \(length) bytes is over the limit of \(limit) bytes; not stored"
        case .extendedDataTooLarge(let size, let limit):
            return "extended data of \(size) bytes is over the limit of \(limit) bytes; not stored"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
