import Foundation

// Schema version 2 (`PRAGMA user_version = 2`), added to the manifest of version 1 (f51e949) at open,
// in one write transaction, keeping every row:
//
//   table access_log(key text, time integer)                 reads not yet folded into last_access_time
//   index manifest_filename on manifest(filename) where filename is not null
//                                                             the crash cleanup visits file rows only
//   table totals(id integer primary key check (id = 1), count integer, size integer)
//   triggers manifest_totals_insert/_delete/_update           keep totals equal to count(*) and sum(size)
//
// `totals` is seeded with `count(*)`/`sum(size)` once (O(n), at the upgrade) and from then on kept exact by
// the triggers inside every transaction that changes `manifest`, in every process and every connection.
// `INSERT OR REPLACE` deletes the replaced row without firing delete triggers unless `recursive_triggers`
// is on, so every connection of this version turns it on (a writer of version 1 sharing the folder would
// make the totals drift; they are recounted when the manifest is recreated).

extension KVStorage {
    /// The schema version this code writes.
    static let schemaVersion: Int64 = 2

    static let schemaVersion2 = """
        CREATE TABLE IF NOT EXISTS access_log (key TEXT NOT NULL, time INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS manifest_filename ON manifest(filename) WHERE filename IS NOT NULL;
        CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL,
            size INTEGER NOT NULL);
        CREATE TRIGGER IF NOT EXISTS manifest_totals_insert AFTER INSERT ON manifest
            BEGIN UPDATE totals SET count = count + 1, size = size + new.size WHERE id = 1; END;
        CREATE TRIGGER IF NOT EXISTS manifest_totals_delete AFTER DELETE ON manifest
            BEGIN UPDATE totals SET count = count - 1, size = size - old.size WHERE id = 1; END;
        CREATE TRIGGER IF NOT EXISTS manifest_totals_update AFTER UPDATE OF size ON manifest
            BEGIN UPDATE totals SET size = size - old.size + new.size WHERE id = 1; END;
        """

    /// Brings the manifest to `schemaVersion` (see the top of this file); a no-op (one PRAGMA read) when it
    /// is there already. Runs on every open, after the version-1 schema is in place.
    static func upgradeSchema(_ database: SQLiteDatabase) throws(KVCacheError) {
        try database.execute("PRAGMA recursive_triggers=ON")
        guard try userVersion(database) < schemaVersion else { return }
        try database.execute("BEGIN IMMEDIATE")
        do {
            // Another opener may have upgraded it while we waited for the write lock.
            if try userVersion(database) < schemaVersion {
                try database.execute(schemaVersion2)
                try database.execute("""
                    INSERT OR REPLACE INTO totals (id, count, size)
                        SELECT 1, count(*), coalesce(sum(size), 0) FROM manifest
                    """)
                try database.execute("PRAGMA user_version = \(schemaVersion)")
            }
            try database.execute("COMMIT")
        } catch {
            do {
                try database.execute("ROLLBACK")
            } catch {
                kvLog.debug("KVStorage: ROLLBACK of the schema upgrade reported: \(error)")
            }
            throw error
        }
    }

    static func userVersion(_ database: SQLiteDatabase) throws(KVCacheError) -> Int64 {
        let select = try database.prepare("PRAGMA user_version")
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    /// The entry count and total value size, from `totals` (O(1)). Inside the caller's read or write
    /// transaction.
    func totals() throws(KVCacheError) -> (count: Int, size: Int64) {
        let select = try database.prepare("SELECT count, size FROM totals WHERE id = 1")
        defer { select.reset() }
        guard try select.step() else {
            throw .sqlite(code: SQLiteCode.corrupt, message: "the totals row is missing", operation: "SELECT FROM totals")
        }
        return (Int(select.int64(0)), select.int64(1))
    }
}
