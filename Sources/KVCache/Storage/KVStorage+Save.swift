import Foundation

extension KVStorage {
    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`: it takes the write lock up front, so writers in
    /// other processes queue behind it). Rolls back and rethrows on failure.
    /// Ends the read snapshot first, and announces the commit to every reader of the folder after it.
    func inWriteTransaction<T>(_ body: () throws(KVCacheError) -> T) throws(KVCacheError) -> T {
        prepareWrite()
        try database.executePrepared(.beginImmediate)
        do {
            let result = try body()
            try journalMovedFiles() // the names rows stopped using, before they are durable (KVStorage+IntentJournal)
            try database.executePrepared(.commit)
            didCommit()
            return result
        } catch {
            do {
                try database.executePrepared(.rollback)
            } catch {
                // After some errors SQLite has already rolled back; nothing is left open either way.
                kvLog.debug("KVStorage: ROLLBACK after \(error) reported: \(error)")
            }
            throw error
        }
    }

    /// Saves `value` for `key`, replacing any previous value and extended data.
    ///
    /// With `.file`, a filename is required; with `.sqlite` it is ignored; with `.mixed`, a filename puts the
    /// value in a file and `nil` keeps it inline. The file is written to `tmp/`, renamed into `data/`, then
    /// the row is upserted, all-or-nothing: on failure the previous value is intact.
    ///
    /// - Parameters:
    ///   - filename: The value file's name (unique per key; not empty, no `/` or NUL, not `.` or `..`, else
    ///     `.invalidArgument`). When the key's current file already has this name, or another row uses it, the
    ///     new version is written beside it as `<filename>.1` (or `.2`, … : the first name no row uses) so the
    ///     old file stays valid until the row moves.
    ///   - extendedData: Extra bytes kept beside the value, `nil` for none.
    /// Any key is stored as its exact UTF-8 bytes: the empty key, keys holding NUL, and keys that are
    /// canonically equivalent but differ as bytes (`"é"` and `"e\u{301}"`) are distinct entries.
    ///
    /// - Throws: `KVCacheError` (`.invalidArgument`, `.io` with errno, `.sqlite`).
    public func save(key: String, value: Data, filename: String? = nil, extendedData: Data? = nil) throws(KVCacheError) {
        // One operation of the recovery protocol: it may reopen the manifest only here, before a temporary
        // is written and before `write.lock` is taken.
        try guarded { () throws(KVCacheError) in
            try saveOperation(key: key, value: value, filename: filename, extendedData: extendedData)
        }
    }

    /// `save` inside `guarded`.
    private func saveOperation(key: String, value: Data, filename: String?, extendedData: Data?) throws(KVCacheError) {
        let storedFilename: String?
        switch type {
        case .sqlite: storedFilename = nil
        case .mixed: storedFilename = filename
        case .file:
            guard let filename else { throw .invalidArgument("a .file storage needs a filename for key \(key)") }
            storedFilename = filename
        }
        if let name = storedFilename, !Self.isSafeFilename(name) {
            throw .invalidArgument("bad filename \(name)")
        }
        if storedFilename == nil, try saveInlineIfNoFile(key: key, value: value, extendedData: extendedData) { return }
        var temporary: String?
        if storedFilename != nil {
            let tmp = tmpPath + "/" + uniqueName()
            do {
                do {
                    try io.write(value, to: tmp, sync: syncsFiles)
                } catch .io(let code, _, _) where code == ENOENT {
                    // tmp/ removed by hand while the store is open: made again, the write tried once more.
                    try io.makeDirectory(tmpPath)
                    try io.write(value, to: tmp, sync: syncsFiles)
                }
            } catch {
                removeQuietly(tmp)
                throw error
            }
            temporary = tmp
        }
        // From here on files move into and out of data/: under the folder's file lock (see `withFileLock`).
        do {
            try withFileLock { () throws(KVCacheError) in
                try placeAndCommit(key: key, value: value, storedFilename: storedFilename, temporary: temporary,
                                   extendedData: extendedData)
            }
        } catch {
            // placeAndCommit removed it already unless the lock itself failed; a second unlink is harmless.
            if let temporary { removeQuietly(temporary) }
            throw error
        }
    }

    /// The part of `save` under the file lock: the write transaction that renames the temporary into data/
    /// and upserts the row, then the old file's move to trash.
    private func placeAndCommit(
        key: String, value: Data, storedFilename: String?, temporary: String?, extendedData: Data?
    ) throws(KVCacheError) {
        var placed: String?
        let now = nextStamp()
        let previous: String?
        do {
            previous = try guarded { () throws(KVCacheError) -> String? in
                try inWriteTransaction { () throws(KVCacheError) -> String? in
                    let previous = try currentFilename(forKey: key)
                    if let name = storedFilename, let temporary {
                        let target = try freeFilename(name)
                        try journal([target]) // before the file exists in data/ (KVStorage+IntentJournal)
                        try io.rename(temporary, to: dataPath + "/" + target)
                        placed = target
                    }
                    let insert = try database.prepare(.insertRow)
                    defer { insert.reset() }
                    insert.bind(key, at: 1)
                    insert.bind(placed, at: 2)
                    insert.bind(Int64(value.count), at: 3)
                    insert.bind(placed == nil ? value : nil, at: 4)
                    insert.bind(now, at: 5)
                    insert.bind(extendedData, at: 6)
                    try insert.run()
                    // Durability (`syncsFiles`): the rename into data/ must be on disk before the COMMIT that
                    // makes the row durable, or a power loss could keep a row whose file never arrived (and
                    // the old file goes to trash after the COMMIT): the key would have neither value.
                    if placed != nil && syncsFiles { try io.syncDirectory(dataPath) }
                    return previous
                }
            }
        } catch {
            if let temporary { removeQuietly(temporary) }
            // The new file's name differs from every name the (rolled back) row could use: it is unreferenced.
            if let placed { removeQuietly(dataPath + "/" + placed) }
            throw error
        }
        pendingAccessTimes.removeValue(forKey: ExactKey(key))
        // File names compare by their bytes, as the file system does: `"café"` composed and decomposed are two
        // files (`KVCacheCanonicalFilenameOrphanReviewTests`); Swift's `!=` would call them one.
        if let previous, placed.map({ ExactKey(previous) != ExactKey($0) }) ?? true { moveToTrash(previous) }
    }

    /// The fast path of an inline save: one upsert in autocommit (no `BEGIN`/`SELECT`/`COMMIT`, nothing on
    /// the file system), applied only when the key is new or its row is inline too. Returns `false`, having
    /// changed nothing, when the current row uses a file: that case needs the transaction of `save` so the
    /// old file goes to trash after the row stops referencing it.
    func saveInlineIfNoFile(key: String, value: Data, extendedData: Data?) throws(KVCacheError) -> Bool {
        let now = nextStamp()
        prepareWrite()
        let saved = try guarded { () throws(KVCacheError) -> Bool in
            let upsert = try database.prepare(.upsertInline)
            defer {
                upsert.reset()
                didCommit()
            }
            upsert.bind(key, at: 1)
            upsert.bind(Int64(value.count), at: 2)
            upsert.bind(value, at: 3)
            upsert.bind(now, at: 4)
            upsert.bind(extendedData, at: 5)
            try upsert.run()
            return database.changes > 0
        }
        if saved { pendingAccessTimes.removeValue(forKey: ExactKey(key)) }
        return saved
    }

    /// Replaces the extended data of an existing entry; returns whether the key was found.
    @discardableResult
    public func setExtendedData(_ extendedData: Data?, forKey key: String) throws(KVCacheError) -> Bool {
        prepareWrite()
        return try guarded { () throws(KVCacheError) -> Bool in
            let update = try database.prepare("UPDATE manifest SET extended_data = ?1 WHERE key = ?2")
            defer {
                update.reset()
                didCommit()
            }
            update.bind(extendedData, at: 1)
            update.bind(key, at: 2)
            try update.run()
            return database.changes > 0
        }
    }

    /// The name a new value file asked to be `name` gets in `data/`: `name` itself when no row uses it, else
    /// the first of `<name>.1`, `<name>.2`, … no row uses. Inside the write transaction, under `write.lock`, so
    /// no writer can take it before the row does. The key's own current file counts as used (its old value
    /// stays valid until the row moves: a replace alternates `name`/`name.1`), and so does another key's
    /// (a caller's names may well be `x` and `x.1`: `KVCacheAlternateNameReviewTests`). A file in `data/`
    /// under that name that no row uses is an orphan, replaced. An alternate longer than `NAME_MAX` (255
    /// bytes) keeps the longest prefix of `name` that fits, cut at a character boundary
    /// (`KVCacheLongFilenameReviewTests`).
    func freeFilename(_ name: String) throws(KVCacheError) -> String {
        let select = try database.prepare(
            "SELECT 1 FROM manifest INDEXED BY manifest_filename WHERE filename = ?1 LIMIT 1")
        var candidate = name
        for suffix in 1... {
            do {
                defer { select.reset() }
                select.bind(candidate, at: 1)
                if try !select.step() { return candidate }
            }
            candidate = Self.alternateFilename(name, suffix: suffix)
        }
        preconditionFailure("unreachable")
    }

    /// The longest name a file in `data/` may have (Linux `NAME_MAX`, in bytes).
    static let maxFilenameBytes = 255

    /// `<name>.<suffix>`, with `name` cut to its longest prefix of whole characters that keeps the result
    /// within `maxFilenameBytes`.
    static func alternateFilename(_ name: String, suffix: Int) -> String {
        let ending = ".\(suffix)"
        let room = maxFilenameBytes - ending.utf8.count
        guard name.utf8.count > room else { return name + ending }
        var prefix = Substring(name)
        while prefix.utf8.count > room { prefix = prefix.dropLast() }
        return prefix + ending
    }

    /// The file name the row for `key` uses, or `nil` (no row, or an inline value).
    func currentFilename(forKey key: String) throws(KVCacheError) -> String? {
        let select = try database.prepare(.selectFilename)
        defer { select.reset() }
        select.bind(key, at: 1)
        return try select.step() ? select.text(0) : nil
    }

    /// Removes a file we created and no row references; a failure is logged (the next open-time cleanup
    /// removes what is left).
    func removeQuietly(_ path: String) {
        do {
            try io.unlink(path)
        } catch {
            keepJournal()
            kvLog.error("KVStorage: cannot remove \(path): \(error)")
        }
    }
}

extension KVStorage {
    /// Whether `name` names a file inside `data/`: not empty, no `/`, no NUL, not `.` or `..`. Checked on save
    /// and on every filename read back from the manifest, so a damaged manifest can never reach outside the
    /// folder. NUL is refused because the system calls stop at it: `"v\0one"` and `"v\0two"` would both be
    /// `data/v` (`KVCacheNulFilenameReviewTests`).
    static func isSafeFilename(_ name: String) -> Bool {
        // A scan of the UTF-8 bytes: Foundation's `contains(_:)` on a String goes through NSString (it showed
        // in read profiles).
        !name.isEmpty && !name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 }) && name != "." && name != ".."
    }
}
