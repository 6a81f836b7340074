import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Clean shutdown: `<path>/lock` holds, as decimal text, the number of instances that have the folder open
// (updated under `write.lock`: +1 by each open, −1 by each `close()`). A process killed while it has the
// folder open never decrements it, so the next first opener (the one with the exclusive open lock, i.e.
// nobody else has the folder open) finds it above 0: the last shutdown was unclean. Only then does it run
// the crash cleanup (temporaries, rows whose file is missing, files no row references — the file rows through
// a partial index) and, on a manifest of at most 128 MB (`quickCheckPageLimit`), `PRAGMA quick_check`; after
// a clean shutdown it only empties `tmp/` (what older versions may leave). A recreated or missing manifest
// is cleaned up after whatever the count says. A store of an older version has no count yet and is treated
// as unclean once. Opening a clean 1M-entry store therefore costs a few SQLite PRAGMAs, not a scan.

extension KVStorage {
    /// The largest manifest (in 4 KB pages: 128 MB) the open-time `PRAGMA quick_check` after an unclean
    /// shutdown reads whole (about 40 ms of CPU). SQLite 3.40's check cannot be interrupted part-way (its
    /// progress handler runs between opcodes, and the check is one opcode), so a larger manifest is not
    /// checked at open: SQLite's WAL recovery already makes a process crash harmless to it, and damage is
    /// met by the statement that reads the damaged page, which the corruption path handles.
    static let quickCheckPageLimit: Int64 = 32_768

    /// Open-time bookkeeping observed by tests: whether the last open ran `quick_check` and the full crash
    /// cleanup.
    struct OpenReport: Equatable {
        var previousShutdownWasClean = false
        var ranQuickCheck = false
        var ranCrashCleanup = false
    }

    /// The open-instance count in the lock file, or `nil` when it holds none (a new folder, or one last
    /// opened by an older version).
    static func readInstanceCount(_ lockDescriptor: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(lockDescriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// Adds `delta` to the open-instance count (under `write.lock`, so concurrent openers and closers of
    /// any process do not lose updates); `reset` starts from 0 instead of the stored count (the exclusive
    /// opener: every instance counted before is gone).
    func changeInstanceCount(by delta: Int, reset: Bool = false) throws(KVCacheError) {
        try withFileLock { () throws(KVCacheError) in
            let current = reset ? 0 : Self.readInstanceCount(lockDescriptor) ?? 0
            let bytes = Array("\(max(0, current + delta))\n".utf8)
            guard pwrite(lockDescriptor, bytes, bytes.count, 0) == bytes.count,
                  ftruncate(lockDescriptor, off_t(bytes.count)) == 0
            else { throw .io(errno: errno, operation: "write instance count", path: path + "/lock") }
        }
    }

    /// Whether the open-time `quick_check` reads this manifest (see `quickCheckPageLimit`).
    static func isSmallEnoughToCheckAtOpen(_ database: SQLiteDatabase) throws(KVCacheError) -> Bool {
        let select = try database.prepare("PRAGMA page_count")
        defer { select.reset() }
        return try select.step() && select.int64(0) <= quickCheckPageLimit
    }

    /// `PRAGMA quick_check`'s rows, or `["ok"]` (logged) for a manifest above `quickCheckPageLimit`.
    static func openTimeQuickCheck(_ database: SQLiteDatabase) throws(KVCacheError) -> [String] {
        guard try isSmallEnoughToCheckAtOpen(database) else {
            kvLog.notice("KVStorage at \(database.path): manifest above \(quickCheckPageLimit) pages: no quick_check at open")
            return ["ok"]
        }
        return try database.textRows("PRAGMA quick_check")
    }

    /// Empties `tmp/` (the exclusive opener after a clean shutdown: temporaries only an older version or a
    /// killed writer can have left).
    func removeTemporaries() throws(KVCacheError) {
        for name in try io.contentsOfDirectory(tmpPath) { try io.unlink(tmpPath + "/" + name) }
    }
}

