import Foundation

/// What the last crash cleanup of one instance did (tests count the files it looked at).
struct CleanupReport: Equatable {
    /// It scanned every file row and `data/` (else only the intent journal's names).
    var fullScan = false
    /// Entries of `tmp/`, journal names, file rows and `data/` entries it looked at.
    var filesExamined = 0
    /// Cleanups this instance ran (at open and in the recovery protocol).
    var runs = 0
}

extension KVStorage {
    /// Removes what a crash can leave behind: temporaries in `tmp/`, rows whose file is missing or has the
    /// wrong size, and files in `data/` no row references. Runs only under the exclusive open lock (no other
    /// instance is writing). With `fullScan`, every file row and every file of `data/` is looked at (a
    /// recreated or missing manifest, a store of an older version, a power loss); else only the names in
    /// the intent journal (what the writers that died were moving, see KVStorage+IntentJournal.swift), so
    /// the cost follows what the crash left, not the store's size. Empties the journal when done. Returns
    /// the number of orphan files removed.
    func cleanUpAfterCrash(fullScan: Bool) throws(KVCacheError) -> Int {
        // `guarded` outside the file lock: the recovery protocol never runs while `write.lock` is held.
        try guarded { () throws(KVCacheError) -> Int in try withFileLock { () throws(KVCacheError) -> Int in
            let names = try journaledNames()
            // An empty name: a rebuild or a full scan that did not finish (see KVStorage+IntentJournal.swift).
            let fullScan = fullScan || names.contains("")
            // Recorded first: a crash during this scan makes the next cleanup scan everything too.
            if fullScan { try journal([""]) }
            var report = CleanupReport(fullScan: fullScan, filesExamined: 0, runs: cleanupReport.runs + 1)
            defer { cleanupReport = report }
            let temporaries = try io.contentsOfDirectory(tmpPath)
            report.filesExamined += temporaries.count
            for name in temporaries { try io.unlink(tmpPath + "/" + name) }
            let orphans: Int
            if fullScan {
                orphans = try cleanUpEveryFile(examined: &report.filesExamined)
            } else {
                orphans = try cleanUpJournaledFiles(names, examined: &report.filesExamined)
            }
            dropWholeJournal()
            return orphans
        } }
    }

    /// Frees the slots of dead instances beside live ones (see `InstanceSlots.reapDead`), removing the
    /// temporaries each left in `tmp/`. Best effort: a failure is logged, and what is left stays on record
    /// for the next opener. Returns the slots freed.
    @discardableResult
    static func reapDeadInstances(_ slots: InstanceSlots, tmpPath: String, io: FileIO) -> Int {
        do {
            // Listed once, before any lock: a dead instance writes nothing more.
            var temporaries: [String]?
            let reaped = try slots.reapDead { (index: Int) throws(KVCacheError) in
                if temporaries == nil { temporaries = try io.contentsOfDirectory(tmpPath) }
                let prefix = InstanceSlots.temporaryPrefix(index)
                for name in temporaries ?? [] where name.utf8.starts(with: prefix.utf8) { try io.unlink(tmpPath + "/" + name) }
            }
            if reaped > 0 { kvLog.debug("KVStorage at \(tmpPath): freed \(reaped) slots of instances that died") }
            return reaped
        } catch {
            kvLog.error("KVStorage at \(tmpPath): cannot free the slots of dead instances (the next opener retries): \(error)")
            return 0
        }
    }

    /// Frees, from this open instance, the slots of instances that died beside it, and works off what they
    /// were moving (the intent journal). `DiskCache`'s background trim calls it, so a long-running instance
    /// with no new opener beside it reaps too. Cheap when nobody died: one read of `instances` and a lock
    /// test per slot marked open. Returns the slots freed.
    @discardableResult
    func reapDeadInstancesBesideThis() -> Int {
        guard let slots = instanceSlots else { return 0 }
        let reaped = Self.reapDeadInstances(slots, tmpPath: tmpPath, io: io)
        if reaped > 0 { cleanUpJournalBesideOthers() }
        return reaped
    }

    /// Works off the intent journal's records beside live instances (an opener that is not exclusive): under
    /// `write.lock` every record there is a dead writer's or a failed move's, as a live writer truncates its
    /// own before it lets go (KVStorage+IntentJournal.swift). A full-scan request is left to the exclusive
    /// opener. Best effort: on failure the records stay for the next opener.
    func cleanUpJournalBesideOthers() {
        do {
            try guarded { () throws(KVCacheError) in try withFileLock { () throws(KVCacheError) in
                let names = try journaledNames()
                guard !names.isEmpty, !names.contains("") else { return }
                var report = CleanupReport(fullScan: false, filesExamined: 0, runs: cleanupReport.runs + 1)
                defer { cleanupReport = report }
                _ = try cleanUpJournaledFiles(names, examined: &report.filesExamined)
                dropWholeJournal()
            } }
        } catch {
            kvLog.error("KVStorage at \(path): cannot work off the intent journal (the next opener retries): \(error)")
        }
    }

    /// The full scan of `cleanUpAfterCrash`.
    private func cleanUpEveryFile(examined: inout Int) throws(KVCacheError) -> Int {
        endReadSnapshot() // the rows as they are now (see `cleanUpJournaledFiles`)
        // File names compare by their bytes, as the file system does (`ExactKey`).
        var referenced = Set<ExactKey<String>>()
        var broken: [Int64] = []
        try guarded { () throws(KVCacheError) in
            // The partial index: a store of inline values is not scanned (see KVStorage+Schema.swift).
            let statement = try database.prepare(
                "SELECT rowid, filename, size FROM manifest INDEXED BY manifest_filename WHERE filename IS NOT NULL")
            defer { statement.reset() }
            while try statement.step() {
                guard let filename = statement.text(1) else { continue }
                examined += 1
                if Self.isSafeFilename(filename), try io.fileSize(dataPath + "/" + filename) == statement.int64(2) {
                    referenced.insert(ExactKey(filename))
                } else {
                    broken.append(statement.int64(0))
                }
            }
        }
        try removeBrokenRows(broken)
        var orphans = 0
        let names = try io.contentsOfDirectory(dataPath)
        examined += names.count
        for name in names where !referenced.contains(ExactKey(name)) {
            moveToTrash(name)
            orphans += 1
        }
        return orphans
    }

    /// The journal part of `cleanUpAfterCrash`: each journaled name's rows and file.
    private func cleanUpJournaledFiles(_ names: [String], examined: inout Int) throws(KVCacheError) -> Int {
        // The rows as they are now: under `write.lock` every writer's COMMIT is done, but the read snapshot
        // this instance may keep from its last reads can predate a dead writer's, and would show the file it
        // placed as unused (trashed under its committed row: `KVCacheStaleSnapshotCleanupReviewTests`).
        endReadSnapshot()
        var seen = Set<ExactKey<String>>()
        var orphans = 0
        var broken: [Int64] = []
        var trashAfter: [String] = []
        // A name longer than a file name can be (a save of it fails at its rename into data/, after its record
        // was written) names no file: nothing to clean, and `stat` would fail with ENAMETOOLONG at every
        // cleanup, every exclusive open with it (`KVCacheOverlongJournalNameReviewTests`).
        for name in names where seen.insert(ExactKey(name)).inserted && Self.isSafeFilename(name)
            && name.utf8.count <= Self.maxFilenameBytes {
            examined += 1
            let onDisk = try io.fileSize(dataPath + "/" + name)
            let rows = try guarded { () throws(KVCacheError) -> [(Int64, Int64)] in
                let select = try database.prepare(
                    "SELECT rowid, size FROM manifest INDEXED BY manifest_filename WHERE filename = ?1")
                defer { select.reset() }
                select.bind(name, at: 1)
                var rows: [(Int64, Int64)] = []
                while try select.step() { rows.append((select.int64(0), select.int64(1))) }
                return rows
            }
            if rows.isEmpty {
                if onDisk != nil {
                    moveToTrash(name)
                    orphans += 1
                }
            } else if rows.contains(where: { $0.1 != onDisk }) {
                broken += rows.map(\.0)
                if onDisk != nil { trashAfter.append(name) }
            }
        }
        try removeBrokenRows(broken)
        for name in trashAfter { moveToTrash(name) }
        return orphans + trashAfter.count
    }

    /// Deletes the rows whose file is missing or of the wrong size.
    private func removeBrokenRows(_ broken: [Int64]) throws(KVCacheError) {
        guard !broken.isEmpty else { return }
        kvLog.warning("KVStorage at \(path): removing \(broken.count) rows whose file is missing or damaged")
        try guarded { () throws(KVCacheError) in
            try inWriteTransaction { () throws(KVCacheError) in
                let delete = try database.prepare("DELETE FROM manifest WHERE rowid = ?1")
                for rowid in broken {
                    defer { delete.reset() }
                    delete.bind(rowid, at: 1)
                    try delete.run()
                }
            }
        }
    }

    /// Moves `data/<filename>` to `trash/`; if that fails, unlinks it; if that fails too, logs it (the next
    /// open-time cleanup removes it as an orphan). Removal must not fail once the row is gone.
    func moveToTrash(_ filename: String) {
        guard Self.isSafeFilename(filename) else {
            kvLog.error("KVStorage at \(path): not removing \(filename): not a file name inside data/")
            return
        }
        let source = dataPath + "/" + filename
        do {
            try io.rename(source, to: trashPath + "/" + uniqueName() + "-" + filename)
            hasNewTrash = true
        } catch {
            // ENOENT is also a missing trash/ (removed by hand while the store is open), not only a file
            // already gone: the unlink tells them apart (`KVCacheMissingTrashFolderReviewTests`), and trash/ is
            // made again for the next removal.
            if case .io(let code, _, _) = error, code == ENOENT {
                do { try io.makeDirectory(trashPath) } catch { kvLog.error("KVStorage at \(path): cannot recreate trash/: \(error)") }
            }
            do {
                try io.unlink(source) // a file already gone is no error
            } catch {
                keepJournal() // the next cleanup retries it (KVStorage+IntentJournal.swift)
                kvLog.error("KVStorage at \(path): cannot remove \(source): \(error)")
            }
        }
    }

    /// Deletes every file in `trash/` of the folder at `path`. Safe to call from any thread while the store
    /// is in use (it touches only `trash/`); `DiskCache` calls it in the background after removals.
    ///
    /// - Returns: The number of files deleted.
    @discardableResult
    public static func emptyTrash(atPath path: String) throws(KVCacheError) -> Int {
        let io = FileIO(faults: nil)
        let trash = path + "/trash"
        let names = try io.contentsOfDirectory(trash)
        for name in names { try io.unlink(trash + "/" + name) }
        return names.count
    }

    /// Checks the store against its manifest: `PRAGMA quick_check` is ok, every file row's file exists with
    /// the row's size, every inline row's blob has the row's size, no file in `data/` is unreferenced,
    /// `tmp/` is empty, and the `totals` row equals a recount. Returns the problems found (empty when consistent). O(n) with I/O; for tests.
    ///
    /// - Important: Only meaningful while no other instance is writing to the folder.
    func _checkInvariants() throws(KVCacheError) -> [String] {
        var problems: [String] = []
        let check = try database.textRows("PRAGMA quick_check")
        if check != ["ok"] { problems.append("quick_check: \(check)") }
        var referenced = Set<ExactKey<String>>()
        let statement = try database.prepare("SELECT key, filename, size, length(inline_data) FROM manifest")
        defer { statement.reset() }
        while try statement.step() {
            let key = statement.text(0) ?? "?"
            let size = statement.int64(2)
            if let filename = statement.text(1) {
                if !referenced.insert(ExactKey(filename)).inserted { problems.append("\(filename) used by two rows") }
                let actual = try io.fileSize(dataPath + "/" + filename)
                if actual != size { problems.append("row \(key): file \(filename) size \(actual.map(String.init) ?? "missing") ≠ \(size)") }
            } else if statement.isNull(3) || statement.int64(3) != size {
                problems.append("row \(key): inline blob size ≠ \(size)")
            }
        }
        for name in try io.contentsOfDirectory(dataPath) where !referenced.contains(ExactKey(name)) {
            problems.append("orphan file data/\(name)")
        }
        let temporaries = try io.contentsOfDirectory(tmpPath)
        if !temporaries.isEmpty { problems.append("leftover temporaries \(temporaries)") }
        // The totals the triggers keep against a recount (count, value bytes, cost: KVStorage+Schema.swift).
        let recount = try database.prepare(
            "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(\(Self.costExpression("manifest"))), 0) FROM manifest")
        defer { recount.reset() }
        if try recount.step() {
            let counted = (count: Int(recount.int64(0)), size: recount.int64(1), cost: recount.int64(2))
            let kept = try totals()
            if kept != counted { problems.append("totals \(kept) ≠ recount \(counted)") }
        }
        return problems
    }

    /// Runs `PRAGMA quick_check` and returns its rows (`["ok"]` when healthy). For tests and tools.
    func _quickCheck() throws(KVCacheError) -> [String] { try database.textRows("PRAGMA quick_check") }
}
