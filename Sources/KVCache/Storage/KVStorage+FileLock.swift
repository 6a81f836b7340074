import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension KVStorage {
    /// Runs `body` holding the folder's file lock: `flock(LOCK_EX)` on `<path>/write.lock`, which every
    /// instance (in any process) takes around each step that renames a value file into `data/` or out of it.
    ///
    /// Why: SQLite's write lock ends at COMMIT, and a replaced or removed value's old file goes to `trash/`
    /// only after the COMMIT (so a row's file exists at every instant, crash included). Replaced files
    /// alternate between two names (`name`, `name.1`), so without this lock another writer could place a
    /// new file under the old name between that COMMIT and the move to trash, and the move would take the
    /// file the row now uses. Inline writes and access-time flushes never touch `data/` and skip it.
    /// Re-entrant within one instance; a process that dies holding it releases it (the kernel drops `flock`s).
    /// Its content is the intent journal (KVStorage+IntentJournal.swift): this scope's records are dropped
    /// when the outermost call ends.
    func withFileLock<T>(_ body: () throws(KVCacheError) -> T) throws(KVCacheError) -> T {
        if fileLockDepth > 0 { return try body() }
        while flock(fileLockDescriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io(errno: errno, operation: "flock exclusive", path: path + "/write.lock") }
        }
        fileLockDepth += 1
        defer {
            endJournalScope()
            fileLockDepth -= 1
            flock(fileLockDescriptor, LOCK_UN)
        }
        try beginJournalScope() // the intent journal, see KVStorage+IntentJournal.swift
        return try body()
    }

    /// Opens (creating if needed) `<path>/write.lock`.
    static func openFileLock(_ path: String) throws(KVCacheError) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open write lock", path: path) }
        return fd
    }
}
