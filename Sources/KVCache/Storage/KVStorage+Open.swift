import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension KVStorage {
    static let schema = """
        CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY NOT NULL, filename TEXT, size INTEGER NOT NULL,
            inline_data BLOB, modification_time INTEGER NOT NULL, last_access_time INTEGER NOT NULL,
            extended_data BLOB);
        CREATE INDEX IF NOT EXISTS manifest_last_access_time ON manifest(last_access_time);
        """

    /// Takes the folder's advisory lock: exclusive when no other instance has the folder open (then this one
    /// cleans up after crashes), else waits for a shared lock. Returns whether it got the exclusive lock.
    static func acquireOpenLock(_ lockPath: String) throws(KVCacheError) -> (descriptor: Int32, exclusive: Bool) {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open lock file", path: lockPath) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return (fd, true) }
        let code = errno
        guard code == EWOULDBLOCK || code == EINTR else {
            Glibc.close(fd)
            throw .io(errno: code, operation: "flock exclusive", path: lockPath)
        }
        // Wait for the exclusive opener to finish setting up the manifest (WAL mode, schema, cleanup):
        // opening it meanwhile could meet its locks with SQLITE_BUSY, which `journal_mode` does not wait on.
        for retry in [true, false] {
            while flock(fd, LOCK_SH) != 0 {
                guard errno == EINTR else {
                    let failure = errno
                    Glibc.close(fd)
                    throw .io(errno: failure, operation: "flock shared", path: lockPath)
                }
            }
            // Granted after a wait: the opener we waited for may have died in its cleanup, leaving nobody
            // else open (then this instance must be the exclusive one, or a full scan it asked for would wait
            // for the next exclusive open: `KVCacheWaitingOpenerReviewTests`). One more exclusive try, once.
            guard retry else { break }
            flock(fd, LOCK_UN)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return (fd, true) }
        }
        return (fd, false)
    }

    /// Holds the lock shared from now on, so later openers know the folder is in use.
    func downgradeOpenLock() throws(KVCacheError) {
        while flock(lockDescriptor, LOCK_SH) != 0 {
            guard errno == EINTR else { throw .io(errno: errno, operation: "flock shared", path: path + "/lock") }
        }
    }

    static func configureManifest(
        at path: String, syncsFiles: Bool, faults: KVStorageFaults?, checkIntegrity: Bool
    ) throws(KVCacheError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path, busyTimeout: 5_000, faults: faults)
        // Before the first table exists (a new manifest), this makes the file shrinkable: a trim gives the pages
        // it freed back to the file system (`incremental_vacuum`, KVStorage+Vacuum.swift) instead of keeping
        // the manifest at its largest size for good. A no-op on a manifest made before (SQLite allows the
        // change only on an empty database or with a full VACUUM, which we do not run at open).
        try database.execute("PRAGMA auto_vacuum=INCREMENTAL")
        let mode = try database.textRows("PRAGMA journal_mode=WAL")
        guard mode.first?.lowercased() == "wal" else {
            throw .sqlite(code: 1, message: "journal_mode is \(mode.first ?? "?")", operation: "PRAGMA journal_mode=WAL")
        }
        try database.execute(syncsFiles ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        // Reads of inline values come from the page cache or a memory map instead of a pread per page.
        try database.execute("PRAGMA cache_size=-8192")
        _ = try database.textRows("PRAGMA mmap_size=268435456")
        try database.execute(schema)
        try upgradeSchema(database)
        try database.execute("PRAGMA temp_store=MEMORY")
        try database.execute(movedFilesSchema)
        if checkIntegrity {
            let result = try openTimeQuickCheck(database)
            guard result == ["ok"] else {
                throw .sqlite(code: SQLiteCode.corrupt, message: result.prefix(3).joined(separator: "; "),
                              operation: "PRAGMA quick_check")
            }
        }
        return database
    }

    /// Renames the manifest and its WAL/SHM files to `<name>.corrupt-<time>`; returns the new path of the
    /// main file, or `nil` if it could not be moved (then it is deleted, so the store can start over).
    static func moveManifestAside(_ path: String) -> String? {
        let target = "\(path).corrupt-\(wallClockMicroseconds())"
        var moved: String? = target
        // The WAL first: a crash in between must not leave the old WAL beside a new manifest.
        for suffix in ["-wal", "-shm"] {
            if rename(path + suffix, target + suffix) != 0 && errno != ENOENT { unlink(path + suffix) }
        }
        if rename(path, target) != 0 && errno != ENOENT {
            kvLog.error("KVStorage: cannot move \(path) aside (errno \(errno)); deleting it")
            unlink(path)
            moved = nil
        }
        return moved
    }
}
