import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Intent journal: the content of `<path>/write.lock`, the names of value files a writer is moving into or
// out of `data/`, so the cleanup after a process crash looks at those names (and `tmp/`) only, not at every
// row and file of the store.
//
// Every move into or out of data/ happens under `write.lock` (`withFileLock`), so one writer of the folder (in
// any process) at a time appends to the journal. Its records: "<byte count> <name> <check>\n" (<check>: the
// FNV-1a hash of the name's bytes, 8 hex digits, so a record the reader frames wrongly does not pass), appended
//   - before a temporary is renamed into data/ (the name it gets, in `placeAndCommit`);
//   - before the COMMIT of every write transaction, for each file name a row stopped using (a DELETE, or an
//     UPDATE/REPLACE of its filename): TEMP triggers of the connection collect them in `temp.moved_files`
//     (so no write path can forget one), and `inWriteTransaction` appends them (see `journalMovedFiles`).
// The outermost `withFileLock` notes the journal's size when it takes the lock and truncates the journal back
// to it before it lets go: a writer that ran to the end leaves nothing. A writer killed holding the lock leaves
// its records; later writers append after them and truncate back to where they began. A move that failed
// (a file that could not be trashed or removed) keeps the records too (`keepJournal`).
// The exclusive opener (no instance writing) runs the cleanup over the journal's names whenever the journal
// is not empty or the last shutdown was unclean: a name whose file exists and that no row uses goes to trash,
// a row whose file is missing or of the wrong size goes; then it empties the journal.
// A malformed record makes that cleanup a full scan (every row and file): a writer killed inside its `pwrite`
// (a multi-page write, a trim's batch, can end part-way) leaves a torn record, and writers open on the folder
// after it append their records behind it, so a torn record need not be the last one. The records behind it
// cannot be framed again with certainty (a name may hold any byte but `/` and NUL, "\n" included), and the
// hash keeps a wrong framing (a torn record's announced length reaching into the records after it) from
// passing as a record, so the reader never drops names silently (`KVCacheTornJournalReviewTests`). Rare: it
// takes a kill inside a journal write. A journal above `maxJournalSize` (damage, or a dead writer's huge
// batch) is not read at all: a full scan too, then the journal is emptied (`KVCacheHugeBookkeepingFileReviewTests`).
// A record with an empty name asks for a full scan: appended before a rebuild moves the manifest aside
// (every file of data/ becomes an orphan) and before a full scan begins, and dropped with the rest once the
// scan finished, so a crash in between makes the next cleanup scan everything again.
// Not fsynced: a process crash cannot lose it (the page cache survives), and after a power loss or OS crash
// (another boot id, see KVStorage+CleanShutdown.swift) the cleanup scans the whole store instead.

/// The journal bookkeeping of one `KVStorage` while it holds `write.lock`.
struct IntentJournalState {
    /// The journal's size when this instance took `write.lock` (records below it are dead writers').
    var base: off_t = 0
    /// The journal's size now.
    var end: off_t = 0
    /// A move failed: leave this scope's records for the next cleanup.
    var keep = false
}

extension KVStorage {
    /// The TEMP table and triggers that collect the file names rows stop using (see "Intent journal").
    static let movedFilesSchema = """
        CREATE TEMP TABLE IF NOT EXISTS moved_files (name TEXT NOT NULL);
        CREATE TEMP TRIGGER IF NOT EXISTS moved_files_delete AFTER DELETE ON manifest WHEN old.filename IS NOT NULL
            BEGIN INSERT INTO moved_files VALUES (old.filename); END;
        CREATE TEMP TRIGGER IF NOT EXISTS moved_files_update AFTER UPDATE OF filename ON manifest
            WHEN old.filename IS NOT NULL AND old.filename IS NOT new.filename
            BEGIN INSERT INTO moved_files VALUES (old.filename); END;
        """

    private var journalPath: String { path + "/write.lock" }

    /// The largest journal the cleanup reads (4 MB: more than 10,000 names); a larger one means a full scan.
    static let maxJournalSize = 4 << 20

    /// FNV-1a (32 bits) of `bytes`: the check of a journal record.
    static func journalCheck<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    /// The journal record of `name`: "<byte count> <name> <check>\n" (an empty name: a full-scan request).
    static func journalRecord(_ name: String) -> [UInt8] {
        let check = String(journalCheck(name.utf8), radix: 16)
        return Array("\(name.utf8.count) ".utf8) + Array(name.utf8)
            + Array((" " + String(repeating: "0", count: 8 - check.count) + check + "\n").utf8)
    }

    /// Called by the outermost `withFileLock` once it holds the lock.
    func beginJournalScope() throws(KVCacheError) {
        let size = lseek(fileLockDescriptor, 0, SEEK_END)
        guard size >= 0 else { throw .io(errno: errno, operation: "lseek", path: journalPath) }
        journalState = IntentJournalState(base: size, end: size, keep: false)
    }

    /// Called by the outermost `withFileLock` before it lets go: drops this scope's records.
    func endJournalScope() {
        defer { journalState = IntentJournalState() }
        guard journalState.end != journalState.base && !journalState.keep else { return }
        if ftruncate(fileLockDescriptor, journalState.base) != 0 {
            kvLog.error("KVStorage at \(path): cannot truncate the intent journal (errno \(errno)); the next cleanup reads it")
        }
    }

    /// Leaves the current scope's records in the journal (a move failed: the next cleanup retries it).
    func keepJournal() { journalState.keep = true }

    /// Appends `names` to the journal. Under `write.lock` (taken here, and its records then kept, when the
    /// caller does not hold it: a write outside the lock cannot know when its moves are done).
    func journal(_ names: [String]) throws(KVCacheError) {
        guard !names.isEmpty else { return }
        if fileLockDepth == 0 {
            try withFileLock { () throws(KVCacheError) in
                keepJournal()
                try journal(names)
            }
            return
        }
        var bytes: [UInt8] = []
        for name in names { bytes += Self.journalRecord(name) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                pwrite(fileLockDescriptor, $0.baseAddress, $0.count, journalState.end + off_t(offset))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let code = count < 0 ? errno : EIO
                // Records written in part (a full disk stops a write at a page it cannot have) are cut off: left,
                // they would read as a torn record, i.e. a full scan at the next exclusive open and no cleanup
                // beside live instances until then (`KVCacheFullDiskJournalReviewTests`).
                if offset > 0 && ftruncate(fileLockDescriptor, journalState.end) != 0 {
                    kvLog.error("KVStorage at \(path): cannot cut a partial intent journal record (errno \(errno))")
                }
                throw .io(errno: code, operation: "write intent journal", path: journalPath)
            }
            offset += count
        }
        journalState.end += off_t(bytes.count)
    }

    /// Appends the names rows stopped using in the current write transaction (collected by the TEMP
    /// triggers) to the journal. Called by `inWriteTransaction` just before its COMMIT.
    func journalMovedFiles() throws(KVCacheError) {
        let take = try database.prepare("DELETE FROM temp.moved_files RETURNING name")
        var names: [String] = []
        do {
            defer { take.reset() }
            while try take.step() { if let name = take.text(0) { names.append(name) } }
        }
        try journal(names)
    }

    /// The names in the journal (every record, whoever wrote it), in order. A malformed record (torn, or
    /// failing its check) or a journal above `maxJournalSize` adds a full-scan request (an empty name): the
    /// names it may hide are then found by the full scan (see "Intent journal").
    func journaledNames() throws(KVCacheError) -> [String] {
        let (bytes, oversized) = try InstanceSlots.readBounded(fileLockDescriptor, limit: Self.maxJournalSize, path: journalPath)
        if oversized {
            kvLog.warning("KVStorage at \(path): intent journal above \(Self.maxJournalSize) bytes: scanning the whole store")
            return [""]
        }
        var names: [String] = []
        var index = 0
        while index < bytes.count {
            guard let (name, next) = Self.journalRecord(in: bytes, at: index) else {
                kvLog.warning("KVStorage at \(path): malformed intent journal record at byte \(index): scanning the whole store")
                names.append("")
                break
            }
            names.append(name)
            index = next
        }
        return names
    }

    /// The record of `bytes` starting at `index` and the index after it, or `nil` if it is malformed.
    static func journalRecord(in bytes: [UInt8], at index: Int) -> (name: String, next: Int)? {
        let filled = bytes.count
        var length = 0
        var cursor = index
        while cursor < filled, (48...57).contains(bytes[cursor]), length < 1 << 20 {
            length = length * 10 + Int(bytes[cursor] - 48)
            cursor += 1
        }
        guard cursor > index, cursor < filled, bytes[cursor] == UInt8(ascii: " ") else { return nil }
        let start = cursor + 1, stop = start + length
        // " " + 8 hex digits + "\n" after the name.
        guard stop + 10 <= filled, bytes[stop] == UInt8(ascii: " "), bytes[stop + 9] == UInt8(ascii: "\n"),
              let check = UInt32(String(decoding: bytes[(stop + 1)..<(stop + 9)], as: UTF8.self), radix: 16),
              check == journalCheck(bytes[start..<stop])
        else { return nil }
        return (String(decoding: bytes[start..<stop], as: UTF8.self), stop + 10)
    }

    /// Appends a full-scan request (an empty name) to the journal of the folder holding `manifestPath`.
    /// Called by an instance holding `<path>/lock` exclusively (no instance is writing), before a rebuild.
    static func requestFullScan(manifestPath: String) throws(KVCacheError) {
        let journalPath = (manifestPath as NSString).deletingLastPathComponent + "/write.lock"
        let fd = open(journalPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(errno: errno, operation: "open intent journal", path: journalPath) }
        defer { Glibc.close(fd) }
        let record = journalRecord("")
        while true {
            let count = write(fd, record, record.count)
            if count == record.count { return }
            if count < 0 && errno == EINTR { continue }
            throw .io(errno: count < 0 ? errno : EIO, operation: "write intent journal", path: journalPath)
        }
    }

    /// Whether the journal holds anything (one `fstat`).
    func journalIsEmpty() throws(KVCacheError) -> Bool {
        var status = stat()
        guard fstat(fileLockDescriptor, &status) == 0 else { throw .io(errno: errno, operation: "fstat", path: journalPath) }
        return status.st_size == 0
    }

    /// Empties the journal when the current `withFileLock` scope ends (the cleanup handled every record).
    func dropWholeJournal() { journalState.base = 0 }
}
