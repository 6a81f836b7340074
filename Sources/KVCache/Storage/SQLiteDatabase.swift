internal import CWebImageSQLite
import Foundation
import Synchronization

/// `SQLITE_TRANSIENT`: a macro Swift cannot import. SQLite copies the bound bytes before `bind` returns.
/// Computed, not a global `let`: a global costs a `swift_once` check on every bind.
private var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// One SQLite connection with a prepared-statement cache. Wraps `sqlite3_open_v2`, `sqlite3_prepare_v2`,
/// `sqlite3_step` and friends; every failure becomes `KVCacheError.sqlite` with the code and message.
///
/// - Important: Not thread-safe; owned by one `KVStorage` (opened with `SQLITE_OPEN_NOMUTEX`).
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The statements of the hot paths, by `HotStatement` raw value: found without hashing their SQL.
    private var hotStatements = [OpaquePointer?](repeating: nil, count: HotStatement.allCases.count)
    let path: String
    let faults: KVStorageFaults?
    /// The WAL hook's state when checkpoints are deferred (`deferCheckpoints(inlineBound:)`), else `nil`.
    private(set) var walState: WALState?

    /// Opens (creating if needed) the database at `path`, waiting up to `busyTimeout` ms for other
    /// connections' locks. With `create: false` a missing file is an error (SQLITE_CANTOPEN), not a new
    /// database.
    init(path: String, busyTimeout: Int32, faults: KVStorageFaults?, create: Bool = true) throws(KVCacheError) {
        self.path = path
        self.faults = faults
        var db: OpaquePointer?
        if let injected = faults?.checkFailure(.sqliteOpen) {
            throw .sqlite(code: injected.sqliteCode, message: Self.injectedMessage(injected), operation: "open \(path)")
        }
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // The errno under it (EMFILE, EIO, ENOSPC, …) is the cause a caller needs: keep it in the message.
            let message = db.map { Self.message(of: $0) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw .sqlite(code: rc, message: message, operation: "open \(path)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeout)
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection. Idempotent.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        for case let statement? in hotStatements { sqlite3_finalize(statement) }
        hotStatements = [OpaquePointer?](repeating: nil, count: HotStatement.allCases.count)
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// The error for result code `rc` with the connection's message.
    func error(_ rc: Int32, _ operation: String) -> KVCacheError {
        let message = handle.map { Self.message(of: $0) } ?? "closed"
        return .sqlite(code: rc, message: message, operation: operation)
    }

    /// `sqlite3_errmsg`, with the `errno` of the failed system call (`sqlite3_system_errno`) when there is one.
    static func message(of handle: OpaquePointer) -> String {
        let message = String(cString: sqlite3_errmsg(handle))
        let code = sqlite3_system_errno(handle)
        return code == 0 ? message : "\(message) (errno \(code))"
    }

    /// The message of an injected failure, shaped like `message(of:)`.
    static func injectedMessage(_ failure: KVStorageFaults.Failure) -> String {
        failure.errno == 0 ? "injected fault" : "injected fault (errno \(failure.errno))"
    }

    /// Runs SQL without results (PRAGMAs, DDL, `BEGIN`/`COMMIT`); goes through the fault seam.
    func execute(_ sql: String) throws(KVCacheError) {
        guard let handle else { throw .sqlite(code: SQLITE_MISUSE, message: "closed", operation: sql) }
        if let injected = faults?.checkFailure(.sqliteStep) {
            throw .sqlite(code: injected.sqliteCode, message: Self.injectedMessage(injected), operation: sql)
        }
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql) }
    }

    /// Runs a hot statement without results or bindings (`BEGIN IMMEDIATE`, `COMMIT`, `ROLLBACK`, the read
    /// snapshot's `BEGIN`/`END`), so a transaction does not re-parse its SQL every time. `COMMIT` goes through
    /// the fault seam, like `execute`; the snapshot statements do not (they are bookkeeping, not I/O a test
    /// counts).
    func executePrepared(_ hot: HotStatement) throws(KVCacheError) {
        if hot == .commit, let injected = faults?.checkFailure(.sqliteStep) {
            throw .sqlite(code: injected.sqliteCode, message: SQLiteDatabase.injectedMessage(injected), operation: hot.sql)
        }
        let statement = try prepare(hot)
        let rc = sqlite3_step(statement.pointer)
        // Read the error before the reset (which returns the same code but may not keep the message).
        let failure = rc == SQLITE_DONE || rc == SQLITE_ROW ? nil : error(rc, hot.sql)
        sqlite3_reset(statement.pointer)
        if let failure { throw failure }
    }

    /// Whether the connection is outside any transaction (`sqlite3_get_autocommit`).
    var isInAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Runs a one-row, one-column text query such as `PRAGMA quick_check` and returns every row's text.
    func textRows(_ sql: String) throws(KVCacheError) -> [String] {
        let statement = try prepare(sql)
        defer { statement.reset() }
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0) ?? "") }
        return rows
    }

    /// A prepared statement for `sql`, from the cache; reset and with its bindings cleared.
    func prepare(_ sql: String) throws(KVCacheError) -> SQLiteStatement {
        guard let handle else { throw .sqlite(code: SQLITE_MISUSE, message: "closed", operation: sql) }
        if let cached = statements[sql] { return SQLiteStatement(pointer: cached, faults: faults) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, "prepare \(sql)") }
        statements[sql] = statement
        return SQLiteStatement(pointer: statement, faults: faults)
    }

    /// A hot statement, from its slot (prepared on first use); reset and with its bindings cleared.
    func prepare(_ hot: HotStatement) throws(KVCacheError) -> SQLiteStatement {
        if let cached = hotStatements[hot.rawValue] { return SQLiteStatement(pointer: cached, faults: faults) }
        guard let handle else { throw .sqlite(code: SQLITE_MISUSE, message: "closed", operation: hot.sql) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, hot.sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, "prepare \(hot.sql)") }
        hotStatements[hot.rawValue] = statement
        return SQLiteStatement(pointer: statement, faults: faults)
    }

    /// Whether the connection is open.
    var isOpen: Bool { handle != nil }

    /// The SQL of every statement prepared on this connection and still cached (tests check their query
    /// plans: `KVStorageQueryPlanTests`).
    var preparedSQL: [String] {
        Array(statements.keys) + HotStatement.allCases.filter { hotStatements[$0.rawValue] != nil }.map(\.sql)
    }

    /// SQLite's query plan for `sql` (`EXPLAIN QUERY PLAN`: one line per step, e.g. `SEARCH manifest USING
    /// INDEX …` or `SCAN access_log`), prepared apart from the cache and never run.
    func queryPlan(_ sql: String) throws(KVCacheError) -> [String] {
        guard let handle else { throw .sqlite(code: SQLITE_MISUSE, message: "closed", operation: sql) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, "EXPLAIN QUERY PLAN " + sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, "prepare EXPLAIN QUERY PLAN \(sql)") }
        defer { sqlite3_finalize(statement) }
        var lines: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            lines.append(sqlite3_column_text(statement, 3).map { String(cString: $0) } ?? "")
        }
        return lines
    }

    /// Rows changed by the last statement.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }
}

/// A cached prepared statement. Bind, step, read columns, then `reset()` (callers `defer` it).
///
/// Holds no reference to its `SQLiteDatabase` and no copy of its SQL, which cost `unowned` and string
/// reference counting on every read (under 2 % of a read's profile samples; not measurable in time): its
/// connection and its text come from SQLite when an error needs them.
///
/// - Important: Not thread-safe; belongs to its `SQLiteDatabase`, and is used only while that is open.
struct SQLiteStatement {
    let pointer: OpaquePointer
    /// The connection's fault seam (`nil` outside tests).
    let faults: KVStorageFaults?

    /// The statement's SQL, as prepared (`sqlite3_sql`), for error messages.
    var sql: String { sqlite3_sql(pointer).map { String(cString: $0) } ?? "?" }

    func bind(_ value: String?, at index: Int32) {
        guard var value else { sqlite3_bind_null(pointer, index); return }
        // The UTF-8 bytes in place (native strings are contiguous): no NUL-terminated copy as `String` to
        // `UnsafePointer<CChar>` bridging makes.
        if value.utf8.withContiguousStorageIfAvailable({ bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    sqlite3_bind_text64(pointer, index, base, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
                } else {
                    sqlite3_bind_text(pointer, index, "", 0, transient)
                }
            }
        }) == nil {
            value.makeContiguousUTF8()
            // With its byte count: a key may hold NUL.
            _ = value.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    if let base = chars.baseAddress {
                        sqlite3_bind_text64(pointer, index, base, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
                    } else {
                        sqlite3_bind_text(pointer, index, "", 0, transient)
                    }
                }
            }
        }
    }

    func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(pointer, index, value) }

    /// Binds `value` at `index` without copying its bytes (`SQLITE_STATIC`), runs `body` (which steps the
    /// statement and reads its columns), then resets the statement and clears its bindings before the bytes
    /// can go. For the key of every hot lookup: `bind` with `SQLITE_TRANSIENT` costs SQLite a `malloc`, a
    /// copy and a `free` per read. A key may hold NUL: it is bound with its byte count.
    func withBorrowedText<T>(_ value: String, at index: Int32, _ body: () throws(KVCacheError) -> T) throws(KVCacheError) -> T {
        var value = value
        var outcome: Result<T, KVCacheError>?
        value.withUTF8 { bytes in
            // A zero-length text still needs a non-null pointer, or SQLite binds NULL.
            let base = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
            sqlite3_bind_text64(pointer, index, base.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), nil,
                                UInt8(SQLITE_UTF8))
            defer { reset() }
            do throws(KVCacheError) {
                outcome = .success(try body())
            } catch {
                outcome = .failure(error)
            }
        }
        // `withUTF8` runs its closure exactly once.
        return try outcome!.get()
    }

    func bind(_ value: Data?, at index: Int32) {
        guard let value else { sqlite3_bind_null(pointer, index); return }
        _ = value.withUnsafeBytes { raw in
            // A zero-length blob still needs a non-null pointer, or SQLite stores NULL.
            sqlite3_bind_blob64(pointer, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count), transient)
        }
    }

    /// Steps once: `true` for a row, `false` when done. Goes through the fault seam.
    func step() throws(KVCacheError) -> Bool {
        if let injected = faults?.checkFailure(.sqliteStep) {
            throw .sqlite(code: injected.sqliteCode, message: SQLiteDatabase.injectedMessage(injected), operation: sql)
        }
        let rc = sqlite3_step(pointer)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = sqlite3_db_handle(pointer).map { SQLiteDatabase.message(of: $0) } ?? "closed"
            throw .sqlite(code: rc, message: message, operation: sql)
        }
    }

    /// Steps to completion, ignoring rows (for INSERT/UPDATE/DELETE).
    func run() throws(KVCacheError) {
        while try step() {}
    }

    func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(pointer, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }

    /// The column's text, every byte of it: a key may hold NUL (`String(cString:)` would stop there, and a
    /// DELETE by the cut key would match nothing). Bytes that are not UTF-8 (a damaged manifest) are
    /// repaired with U+FFFD; such a key matches no row, so removals go by `rowid`.
    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(pointer, column) else { return nil }
        let count = Int(sqlite3_column_bytes(pointer, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func data(_ column: Int32) -> Data? {
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(pointer, column))
        guard count > 0, let bytes = sqlite3_column_blob(pointer, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

/// The statements of the hot paths (every read, save and transaction), cached in fixed slots.
enum HotStatement: Int, CaseIterable {
    case selectItem, selectInfo, selectValue, containsKey, selectFilename, upsertInline, insertRow
    case beginImmediate, commit, rollback, beginRead, endRead

    var sql: String {
        switch self {
        case .selectItem:
            "SELECT filename, size, modification_time, last_access_time, extended_data, inline_data FROM manifest WHERE key = ?1"
        case .selectInfo:
            "SELECT filename, size, modification_time, last_access_time, extended_data FROM manifest WHERE key = ?1"
        case .selectValue: "SELECT filename, size, inline_data FROM manifest WHERE key = ?1"
        case .containsKey: "SELECT 1 FROM manifest WHERE key = ?1"
        case .selectFilename: "SELECT filename FROM manifest WHERE key = ?1"
        case .upsertInline:
            """
            INSERT INTO manifest (key, filename, size, inline_data, modification_time, last_access_time,
                extended_data) VALUES (?1, NULL, ?2, ?3, ?4, ?4, ?5)
            ON CONFLICT(key) DO UPDATE SET size = excluded.size, inline_data = excluded.inline_data,
                modification_time = excluded.modification_time, last_access_time = excluded.last_access_time,
                extended_data = excluded.extended_data
            WHERE manifest.filename IS NULL
            """
        case .insertRow:
            """
            INSERT OR REPLACE INTO manifest (key, filename, size, inline_data, modification_time,
                last_access_time, extended_data) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
            """
        case .beginImmediate: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        // A deferred transaction: the read lock (the snapshot) is taken by the first SELECT after it.
        case .beginRead: "BEGIN DEFERRED"
        // `END` is `COMMIT`; a read-only transaction has nothing to commit, it only lets the snapshot go.
        case .endRead: "END"
        }
    }
}

extension SQLiteDatabase {
    /// Rows changed by every statement since the connection opened (`sqlite3_total_changes64`), triggers
    /// included.
    var totalChanges: Int64 { handle.map { sqlite3_total_changes64($0) } ?? 0 }
}

/// SQLite primary result codes the storage reacts to.
enum SQLiteCode {
    static let corrupt: Int32 = 11
    static let notADatabase: Int32 = 26
    static let cantOpen: Int32 = 14

    /// Whether `error` means the database file itself is damaged (never true for busy/locked).
    static func isCorruption(_ error: KVCacheError) -> Bool {
        guard case .sqlite(let code, _, _) = error else { return false }
        return [corrupt, notADatabase].contains(code & 0xFF)
    }
}

/// What the WAL hook of a connection with deferred checkpoints keeps (see `deferCheckpoints(inlineBound:)`).
/// Only touched on the connection's thread (the hook runs inside `COMMIT`), like the connection itself.
final class WALState {
    /// Frames in the WAL after the last commit seen by the hook.
    var frames: Int32 = 0
    /// Frames appended since `takeUncheckpointedFrames()` last ran.
    var uncheckpointed: Int64 = 0
    /// Frames at which the committing connection checkpoints itself (the bound on the WAL's growth).
    var inlineBound: Int32 = 0
    /// Frames of the current WAL a checkpoint is known to have copied back (`KVStorage.noteCheckpoint`);
    /// 0 again when the WAL restarts.
    var backfilled: Int32 = 0
    /// Restarts of the WAL seen by the hook (a commit of this connection that found fewer frames than the last).
    var restarts = 0
    /// Unique per count (a manifest reopened gets a new one): tells a `WALSight` of an older one apart.
    let identity = WALState.nextIdentity.add(1, ordering: .relaxed).newValue

    private static let nextIdentity = Atomic<Int>(0)
}

/// What a connection knew of its WAL when a checkpoint began (`KVStorage.walSight()`), so that the
/// checkpoint's result is noted against the WAL it copied (`KVStorage.noteCheckpoint`).
struct WALSight: Sendable {
    /// The `identity` of the count the connection kept then (`nil` when checkpoints were not deferred).
    let identity: Int?
    /// `state.frames` then.
    let frames: Int32
    /// `state.restarts` then.
    let restarts: Int
}

extension SQLiteDatabase {
    /// Replaces SQLite's automatic checkpoint (a PASSIVE checkpoint inside the `COMMIT` that takes the WAL
    /// past 1,000 frames, with its `fsync`s) by a count of the frames appended, for a checkpoint run by
    /// someone else (another connection, on another thread); the commit that takes the WAL past
    /// `inlineBound` frames still checkpoints itself, so the WAL stays bounded if nobody else does.
    /// Idempotent.
    func deferCheckpoints(inlineBound: Int32) {
        guard let handle, walState == nil else { return }
        let state = WALState()
        state.inlineBound = inlineBound
        walState = state
        sqlite3_wal_hook(handle, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            let state = Unmanaged<WALState>.fromOpaque(context).takeUnretainedValue()
            // After a restart the WAL starts again from frame 1.
            state.uncheckpointed += Int64(frames >= state.frames ? frames - state.frames : frames)
            if frames < state.frames {  // the WAL restarted
                state.backfilled = 0
                state.restarts += 1
            }
            state.frames = frames
            if frames >= state.inlineBound {
                // What SQLite's own automatic checkpoint does (its result, e.g. BUSY, is ignored there too).
                sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(state).toOpaque())
    }

    /// Frames appended to the WAL by this connection's commits since the last call (0 when checkpoints are
    /// not deferred); resets the count.
    func takeUncheckpointedFrames() -> Int64 {
        guard let walState else { return 0 }
        defer { walState.uncheckpointed = 0 }
        return walState.uncheckpointed
    }

    /// Runs a PASSIVE checkpoint (copies what it can of the WAL back into the database without waiting
    /// for readers or writers). Returns (frames in the WAL, frames checkpointed).
    func checkpointPassive() throws(KVCacheError) -> (log: Int32, checkpointed: Int32) {
        guard let handle else { throw .sqlite(code: SQLITE_MISUSE, message: "closed", operation: "checkpoint") }
        var log: Int32 = 0, checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &checkpointed)
        guard rc == SQLITE_OK else { throw error(rc, "wal_checkpoint(PASSIVE)") }
        return (log, checkpointed)
    }
}
