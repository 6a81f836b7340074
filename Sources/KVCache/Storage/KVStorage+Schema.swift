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

//
// Schema version 3 adds `totals.cost`: what each entry costs on disk, its value and what the manifest keeps for
// it (`costExpression`): the key three times (the row, the primary-key index, an `access_log` row), the
// extended data, a fixed row overhead, and a value file rounded up to whole 4 KiB blocks. Trims by cost use it,
// so long keys and metadata count against the limit (a 43-byte value under a 100 KiB URL and 100 KiB of
// validators counted 43 bytes and held ~400 KiB: `KVCacheKeyCostTests`). The triggers are replaced to keep it;
// an older writer sharing the folder runs these triggers too (they live in the database).

extension KVStorage {
    /// The schema version this code writes.
    static let schemaVersion: Int64 = 3

    /// Bytes counted for each row besides its key, value and extended data: the row header, its times and
    /// size, the file name and the two index entries that hold no key (about what SQLite stores per row).
    static let rowOverhead: Int64 = 128

    /// The SQL for what the row `row` (`new` or `old` in a trigger, a table alias elsewhere) costs on disk;
    /// see the top of this file.
    static func costExpression(_ row: String) -> String {
        "(CASE WHEN \(row).filename IS NULL THEN \(row).size ELSE (\(row).size + 4095) / 4096 * 4096 END"
            + " + 3 * length(CAST(\(row).key AS BLOB)) + coalesce(length(\(row).extended_data), 0) + \(rowOverhead))"
    }

    /// What `costExpression` computes for a row, in Swift (tests, and callers estimating a save).
    static func cost(keyBytes: Int, valueBytes: Int64, isFile: Bool, extendedDataBytes: Int) -> Int64 {
        let value = isFile ? (valueBytes + 4095) / 4096 * 4096 : valueBytes
        return value + 3 * Int64(keyBytes) + Int64(extendedDataBytes) + rowOverhead
    }

    static var schemaVersion3: String {
        """
        ALTER TABLE totals ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
        DROP TRIGGER IF EXISTS manifest_totals_insert;
        DROP TRIGGER IF EXISTS manifest_totals_delete;
        DROP TRIGGER IF EXISTS manifest_totals_update;
        CREATE TRIGGER manifest_totals_insert AFTER INSERT ON manifest
            BEGIN UPDATE totals SET count = count + 1, size = size + new.size,
                cost = cost + \(costExpression("new")) WHERE id = 1; END;
        CREATE TRIGGER manifest_totals_delete AFTER DELETE ON manifest
            BEGIN UPDATE totals SET count = count - 1, size = size - old.size,
                cost = cost - \(costExpression("old")) WHERE id = 1; END;
        CREATE TRIGGER manifest_totals_update AFTER UPDATE OF key, filename, size, extended_data ON manifest
            BEGIN UPDATE totals SET size = size - old.size + new.size,
                cost = cost - \(costExpression("old")) + \(costExpression("new")) WHERE id = 1; END;
        UPDATE totals SET cost = (SELECT coalesce(sum(\(costExpression("manifest"))), 0) FROM manifest) WHERE id = 1;
        """
    }

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
            let version = try userVersion(database)
            if version < 2 {
                try database.execute(schemaVersion2)
                try database.execute("""
                    INSERT OR REPLACE INTO totals (id, count, size)
                        SELECT 1, count(*), coalesce(sum(size), 0) FROM manifest
                    """)
            }
            if version < 3 { try database.execute(schemaVersion3) }
            if version < schemaVersion { try database.execute("PRAGMA user_version = \(schemaVersion)") }
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

    /// The entry count, total value size and total cost (`costExpression`), from `totals` (O(1)). Inside the
    /// caller's read or write transaction.
    func totals() throws(KVCacheError) -> (count: Int, size: Int64, cost: Int64) {
        let select = try database.prepare("SELECT count, size, cost FROM totals WHERE id = 1")
        defer { select.reset() }
        guard try select.step() else {
            throw .sqlite(code: SQLiteCode.corrupt, message: "the totals row is missing", operation: "SELECT FROM totals")
        }
        return (Int(select.int64(0)), select.int64(1), select.int64(2))
    }
}
