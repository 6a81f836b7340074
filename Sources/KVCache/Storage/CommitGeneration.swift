internal import CWebImageSync
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The commit generation of a storage folder: a counter in `<path>/generation`, mapped shared into every
/// process that opens the folder, which every writer increments (atomically) after each commit. A reader
/// that kept a SQLite read transaction open compares it with the value it saw when the transaction began:
/// equal means no writer finished a commit since, so the snapshot is still current (see `KVStorage`).
///
/// File layout: 32 bytes in native byte order: an 8-byte magic (`WKVGENC1`), the 64-bit commit counter, then
/// two counters of the recovery protocol (see "Recovery" in KVStorage+Recovery.swift): recovery requests
/// (an instance met corruption and asks every other one to step aside) and the recovery epoch (+1 each
/// time an instance holding the folder alone checked or rebuilt the manifest). A file that is missing,
/// shorter than 16 bytes or has another magic is (re)initialised with a counter from the clock and the
/// process id, so it never repeats a value a reader may still hold; a 16-byte file (older versions) is
/// extended with zeroed recovery counters. A file replaced or
/// removed while mapped is noticed by `revalidate()` (the store calls it when it begins a read snapshot and
/// before each write; it looks at the path at most every 50 ms) and mapped again.
///
/// - Important: Not thread-safe; owned by one `KVStorage`. The mapping is only ever read and incremented
///   by this type; nothing in the store shrinks the file. (Like SQLite's own `-shm` mapping, a file
///   truncated by a third party while mapped is outside what the store can defend against.)
final class CommitGeneration {
    static let magic: UInt64 = 0x3143_4E45_4756_4B57 // the bytes "WKVGENC1" read little-endian
    static let size = 32
    /// The header older versions wrote (magic and commit counter): still accepted, then extended.
    static let legacySize = 16

    let path: String
    private var descriptor: Int32 = -1
    private var mapping: UnsafeMutableRawPointer?
    private var device: UInt64 = 0
    private var inode: UInt64 = 0
    private var hasReportedFailure = false
    private var lastValidation = 0.0
    /// Successful mappings of the file so far (a new file starts its recovery counters over; see
    /// `KVStorage.reopenIfNeeded`).
    private(set) var mappings = 0
    /// Seconds between two checks of the path by `revalidate()`: 0.05 (tests lower it).
    var revalidationInterval = 0.05

    /// Opens (creating or repairing if needed) and maps the generation file at `path`.
    init(path: String) throws(KVCacheError) {
        self.path = path
        try map()
    }

    deinit { unmap() }

    /// The current generation (an acquire load from the shared mapping).
    var current: UInt64 { load(at: 8) }

    /// Tells every reader of the folder that a commit finished.
    func advance() { increment(at: 8) }

    /// Requests for recovery so far.
    var recoveryRequests: UInt64 { load(at: 16) }

    /// Asks every instance of the folder, in every process, to close its manifest and reopen it.
    func requestRecovery() { increment(at: 16) }

    /// Checks or rebuilds of the manifest by an instance holding the folder alone, so far.
    var recoveryEpoch: UInt64 { load(at: 24) }

    /// Tells instances waiting to reopen that the manifest was checked (and rebuilt if it had to be).
    func advanceRecoveryEpoch() { increment(at: 24) }

    /// The counter at `offset` of the mapping (an acquire load); 0 when nothing is mapped.
    private func load(at offset: Int) -> UInt64 {
        guard let mapping else { return 0 }
        return wi_atomic_load_u64(mapping + offset)
    }

    /// Increments the counter at `offset` of the mapping (atomically, for every process).
    private func increment(at offset: Int) {
        guard let mapping else { return }
        _ = wi_atomic_increment_u64(mapping + offset)
    }

    /// Maps the file again when the path no longer names the mapped file (removed or replaced) or its
    /// header is damaged. A failure is logged and the old mapping kept: the store then relies on its read
    /// limits alone, as it would for a writer that died between commit and increment.
    func revalidate() {
        // A `stat` costs about 1.5 µs, 6 % of a small write: at most once per `revalidationInterval`.
        let now = monotonicSeconds()
        guard now - lastValidation >= revalidationInterval || mapping == nil else { return }
        lastValidation = now
        var info = stat()
        let sameFile = stat(path, &info) == 0 && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
            && info.st_size >= Self.size
        if sameFile, let mapping, mapping.load(fromByteOffset: 0, as: UInt64.self) == Self.magic { return }
        do {
            try map()
            hasReportedFailure = false
        } catch {
            // Once per episode: a folder removed under a live store fails here at every write until it closes.
            if !hasReportedFailure { kvLog.warning("KVStorage: cannot map the generation file \(path) again: \(error)") }
            hasReportedFailure = true
        }
    }

    /// Opens, repairs and maps the file; replaces any previous mapping only on success.
    private func map() throws(KVCacheError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open generation file", path: path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .io(errno: code, operation: "fstat", path: path)
        }
        var header = (UInt64(0), UInt64(0))
        let got = withUnsafeMutableBytes(of: &header) { pread(fd, $0.baseAddress, Self.legacySize, 0) }
        if got != Self.legacySize || header.0 != Self.magic {
            // A fresh counter unlike any value a reader of the old file may hold.
            var fresh = (Self.magic, UInt64(bitPattern: wallClockMicroseconds()) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(getpid()),
                         UInt64(0), UInt64(0))
            let written = withUnsafeBytes(of: &fresh) { pwrite(fd, $0.baseAddress, Self.size, 0) }
            guard written == Self.size else {
                let code = written < 0 ? errno : EIO
                Glibc.close(fd)
                throw .io(errno: code, operation: "initialise generation file", path: path)
            }
        } else if info.st_size < Self.size {
            // Grows only (zeros): a mapping must never reach past the end of the file.
            guard ftruncate(fd, off_t(Self.size)) == 0 else {
                let code = errno
                Glibc.close(fd)
                throw .io(errno: code, operation: "extend generation file", path: path)
            }
        }
        guard let address = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            let code = errno
            Glibc.close(fd)
            throw .io(errno: code, operation: "mmap", path: path)
        }
        unmap()
        mappings += 1
        descriptor = fd
        mapping = address
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    private func unmap() {
        if let mapping { munmap(mapping, Self.size) }
        mapping = nil
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

@available(*, unavailable, message: "CommitGeneration is owned by one KVStorage")
extension CommitGeneration: Sendable {}
