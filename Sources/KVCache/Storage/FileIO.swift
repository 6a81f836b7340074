import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Linux's `O_NOATIME` (`01000000` on every Linux architecture), which Glibc exports only under
/// `_GNU_SOURCE`; 0 elsewhere.
#if os(Linux)
private let openNoAccessTime: Int32 = 0o1000000
#else
private let openNoAccessTime: Int32 = 0
#endif

/// The POSIX file calls of `KVStorage`, each routed through the fault seam and turned into `KVCacheError`.
///
/// - Important: Stateless apart from the seam; safe from any thread.
struct FileIO {
    let faults: KVStorageFaults?

    /// Writes `data` to a new file at `path` (truncating), optionally `fsync`ing it.
    func write(_ data: Data, to path: String, sync: Bool) throws(KVCacheError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open for writing", path: path) }
        var failure: KVCacheError?
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            repeat {
                if let injected = faults?.check(.fileWrite) {
                    failure = .io(errno: injected, operation: "write", path: path)
                    return
                }
                let chunk = buffer.count - offset
                guard chunk > 0, let base = buffer.baseAddress else { return }
                let written = Glibc.write(fd, base + offset, chunk)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .io(errno: errno, operation: "write", path: path)
                    return
                }
                offset += written
            } while offset < buffer.count
        }
        if failure == nil, sync {
            if let injected = faults?.check(.fileSync) {
                failure = .io(errno: injected, operation: "fsync", path: path)
            } else if fsync(fd) != 0 {
                failure = .io(errno: errno, operation: "fsync", path: path)
            }
        }
        if close(fd) != 0, failure == nil { failure = .io(errno: errno, operation: "close", path: path) }
        if let failure { throw failure }
    }

    /// The contents of the file at `path`, or `nil` when it does not exist.
    ///
    /// With `expectedSize` (the size the manifest records), the buffer is sized from it and no `fstat` is
    /// needed: one byte more is asked for, so a longer file comes back one byte longer than expected and a
    /// shorter one short; either way the caller sees the size mismatch.
    func read(_ path: String, expectedSize: Int64? = nil) throws(KVCacheError) -> Data? {
        // `O_NOATIME`: a read need not dirty the inode (LRU order lives in the manifest). The kernel allows it
        // only to the file's owner; another user's file is opened without it.
        var fd = open(path, O_RDONLY | O_CLOEXEC | openNoAccessTime)
        if fd < 0 && errno == EPERM { fd = open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(errno: errno, operation: "open for reading", path: path)
        }
        defer { close(fd) }
        let capacity: Int
        if let expectedSize, expectedSize >= 0, expectedSize < Int64(Int32.max) {
            capacity = Int(expectedSize) + 1
        } else {
            capacity = try Self.size(of: fd, path: path)
        }
        guard capacity > 0 else { return Data() }
        // An uninitialised buffer handed to `Data` without a copy: `Data(count:)` would zero it first, a
        // wasted pass over a large value.
        guard let buffer = malloc(capacity) else { throw .io(errno: ENOMEM, operation: "read", path: path) }
        var offset = 0
        while offset < capacity {
            if let injected = faults?.check(.fileRead) {
                free(buffer)
                throw .io(errno: injected, operation: "read", path: path)
            }
            let asked = capacity - offset
            let got = Glibc.read(fd, buffer + offset, asked)
            if got < 0 {
                if errno == EINTR { continue }
                let failure = errno
                free(buffer)
                throw .io(errno: failure, operation: "read", path: path)
            }
            if got == 0 { break }
            offset += got
            // A read of a regular file stops short only at its end: having the expected size and not the extra
            // byte asked for, the file has exactly the expected size, and a second read (to see 0) is saved.
            if got < asked, let expectedSize, offset == Int(expectedSize) { break }
        }
        return Data(bytesNoCopy: buffer, count: offset, deallocator: .free)
    }

    /// The size of the open file `fd`.
    private static func size(of fd: Int32, path: String) throws(KVCacheError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(errno: errno, operation: "fstat", path: path) }
        return Int(info.st_size)
    }

    /// Renames `source` to `destination`, replacing it atomically.
    func rename(_ source: String, to destination: String) throws(KVCacheError) {
        if let injected = faults?.check(.rename) {
            throw .io(errno: injected, operation: "rename to \(destination)", path: source)
        }
        guard Glibc.rename(source, destination) == 0 else {
            throw .io(errno: errno, operation: "rename to \(destination)", path: source)
        }
    }

    /// `fsync`s the folder at `path`, so the renames into it so far survive a power loss.
    func syncDirectory(_ path: String) throws(KVCacheError) {
        if let injected = faults?.check(.directorySync) {
            throw .io(errno: injected, operation: "fsync folder", path: path)
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open folder", path: path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(errno: errno, operation: "fsync folder", path: path) }
    }

    /// Removes the file at `path`; a missing file is not an error.
    func unlink(_ path: String) throws(KVCacheError) {
        guard Glibc.unlink(path) == 0 || errno == ENOENT else {
            throw .io(errno: errno, operation: "unlink", path: path)
        }
    }

    /// The mode of every folder the store creates: its owner only (`0700`, before the umask). A cache holds
    /// what its owner fetched (URLs in keys, maybe private images): other users have no business reading it.
    static let directoryMode: mode_t = 0o700

    /// Creates the folder at `path` if it does not exist, and its missing parents (`mkdir -p`), each with
    /// `directoryMode`. Folders that exist keep their mode; only what is missing is created, from the deepest
    /// existing ancestor down (an ancestor we may not write, such as `/var/cache`, is never touched when the
    /// folder below it exists). A path that exists but is not a folder throws `.io` with `ENOTDIR`.
    func makeDirectory(_ path: String) throws(KVCacheError) {
        if mkdir(path, Self.directoryMode) == 0 { return }
        let code = errno
        switch code {
        case EEXIST:
            var info = stat()
            guard stat(path, &info) == 0 else { throw .io(errno: errno, operation: "stat", path: path) }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw .io(errno: ENOTDIR, operation: "mkdir", path: path) }
        case ENOENT:
            // A parent is missing: make it (recursively), then this one. A racing creator is fine (EEXIST).
            let parent = Self.parent(of: path)
            guard !parent.isEmpty, parent != path else { throw .io(errno: code, operation: "mkdir", path: path) }
            try makeDirectory(parent)
            guard mkdir(path, Self.directoryMode) == 0 || errno == EEXIST else {
                throw .io(errno: errno, operation: "mkdir", path: path)
            }
        default:
            throw .io(errno: code, operation: "mkdir", path: path)
        }
    }

    /// `path` without its last component (and trailing slashes): `"/a/b/"` → `"/a"`, `"/a"` → `"/"`, `"a"` → `""`.
    static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// The size of the file at `path`, or `nil` when it does not exist.
    func fileSize(_ path: String) throws(KVCacheError) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .io(errno: errno, operation: "stat", path: path)
        }
        return Int64(info.st_size)
    }

    /// The names in the folder at `path` (without `.` and `..`); empty when it does not exist.
    func contentsOfDirectory(_ path: String) throws(KVCacheError) -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return [] }
            throw .io(errno: errno, operation: "opendir", path: path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
