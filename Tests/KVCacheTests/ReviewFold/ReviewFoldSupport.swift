@testable import KVCache
import Foundation
import TestSupport

/// Review (fold step duration, 5e2ba67): helpers that read and write `access_log` and the manifest directly,
/// by the keys' exact bytes, on a `KVStorage` opened without `DiskCache` (no background queue folds behind a
/// test's back).
extension KVStorage {
    /// The manifest's `last_access_time` of the row whose key is `key`'s UTF-8 bytes (as text), `nil` if none.
    func reviewFoldManifestTime(_ key: String) throws -> Int64? {
        endReadSnapshot()
        let select = try database.prepare("SELECT last_access_time FROM manifest WHERE key = ?1")
        defer { select.reset() }
        select.bind(key, at: 1)
        return try select.step() ? select.int64(0) : nil
    }

    /// The manifest's `last_access_time` of the row whose key is exactly `sqlKey` (an SQL expression such as
    /// `CAST(x'ff' AS TEXT)` or `x'6b'`), `nil` if none.
    func reviewFoldManifestTime(sqlKey: String) throws -> Int64? {
        endReadSnapshot()
        let rows = try database.textRows("SELECT last_access_time FROM manifest WHERE key = \(sqlKey)")
        return rows.first.flatMap { Int64($0) }
    }

    /// `access_log`'s rows in rowid order: (rowid, key bytes, whether the key is text, time).
    func reviewFoldLog() throws -> [(rowid: Int64, key: Data, isText: Bool, time: Int64)] {
        endReadSnapshot()
        let select = try database.prepare("SELECT rowid, key, typeof(key) = 'text', time FROM access_log ORDER BY rowid")
        defer { select.reset() }
        var rows: [(rowid: Int64, key: Data, isText: Bool, time: Int64)] = []
        while try select.step() { rows.append((select.int64(0), select.data(1) ?? Data(), select.int64(2) != 0, select.int64(3))) }
        return rows
    }

    /// Appends one `access_log` row for `key` (bound as text, as a flush binds it) with `time`.
    func reviewFoldAppend(_ key: String, time: Int64) throws {
        endReadSnapshot()
        let insert = try database.prepare("INSERT INTO access_log (key, time) VALUES (?1, ?2)")
        defer { insert.reset() }
        insert.bind(key, at: 1)
        insert.bind(time, at: 2)
        try insert.run()
    }

    /// Sets the manifest's `last_access_time` of `key` (text) to `time`.
    func reviewFoldSetManifestTime(_ key: String, _ time: Int64) throws {
        endReadSnapshot()
        let update = try database.prepare("UPDATE manifest SET last_access_time = ?2 WHERE key = ?1")
        defer { update.reset() }
        update.bind(key, at: 1)
        update.bind(time, at: 2)
        try update.run()
    }

    /// Folds until the log is empty, returning how many folds returned `true` (fails after `limit` of them:
    /// a fold that returns `true` forever without progress).
    func reviewFoldAll(limit: Int = 100_000) throws -> Int {
        var folds = 0
        while try foldAccessLogBatch() {
            folds += 1
            if folds >= limit { throw ReviewFoldError.noProgress(folds) }
        }
        return folds
    }
}

enum ReviewFoldError: Error { case noProgress(Int) }
