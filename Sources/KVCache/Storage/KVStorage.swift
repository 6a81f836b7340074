import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Layout of one storage folder (YYKVStorage's, with a crash-safe write order):
//
//   <path>/manifest.sqlite (+ -wal, -shm)   the manifest (WAL journal)
//   <path>/data/<filename>                  value files (filename: md5 of the key unless the caller names it)
//   <path>/tmp/<pid>-<n>                    value files being written; renamed into data/ when complete
//   <path>/trash/<pid>-<n>-<filename>       removed value files, emptied in the background
//   <path>/lock                             advisory lock: shared while open, exclusive for open-time cleanup
//   <path>/instances                        a slot per open instance, OFD-locked (see KVStorage+CleanShutdown)
//   <path>/generation                       commit generation: 8-byte magic + 64-bit counter, mapped shared
//   <path>/write.lock                       advisory lock held around every move of a value file; its content:
//                                           the intent journal (see KVStorage+IntentJournal)
//
//   table manifest(key text primary key, filename text, size integer, inline_data blob,
//                  modification_time integer, last_access_time integer, extended_data blob)
//   index manifest_last_access_time on manifest(last_access_time)
//   index manifest_filename on manifest(filename) where filename is not null
//   table access_log(key text, time integer)      reads not yet folded into last_access_time
//   table totals(id = 1, count integer, size integer, cost integer), kept equal to count(*)/sum(size)/the sum of
//                                           each row's cost (value, key x3, extended data, overhead) by triggers
//   PRAGMA user_version = 3 (versions 1, f51e949, and 2 are upgraded at open: see KVStorage+Schema.swift)
//   PRAGMA auto_vacuum = INCREMENTAL (new manifests): trims give freed pages back (KVStorage+Vacuum.swift)
//
// Access times: a read goes to `pendingAccessTimes`, then (1,024 keys at a time) to `access_log`, and is
// folded into `last_access_time` before trims: a read never rewrites its value's row (see
// KVStorage+AccessTime.swift).
//
// Times are microseconds since 1970 (64-bit), sizes 64-bit bytes.
//
// Write order: the value goes to tmp/, then, inside a write transaction (BEGIN IMMEDIATE, which also
// serialises writers across processes), it is renamed into data/ under a name no row uses and the row is
// upserted; after COMMIT the file the row used before goes to trash/. Delete order: the row goes (COMMIT),
// then its file moves to trash/. So at every instant a row's file exists, and a crash can only leave
// unreferenced files in data/ or tmp/, which the next exclusive open removes. Every step that moves a file
// into or out of data/ (the write transaction and the move to trash after it) holds `write.lock`, so no
// other writer can reuse the old name in between (see `withFileLock`). An inline value whose key
// has no row or an inline row needs no file step: it is one upsert in autocommit (itself atomic), which
// changes nothing when the row turned out to use a file; that case takes the transaction above.
//
// Reads: in WAL mode every SQLite read transaction takes and drops a read lock on the wal-index (`-shm`),
// two `fcntl` calls that were half the cost of a small read. So reads share one read transaction (a
// snapshot, `BEGIN DEFERRED` + the first SELECT) until one of these ends it:
//   - a write on this connection (every write path calls `prepareWrite()` first): read-your-writes;
//   - a commit by any writer of the folder, in any process: every writer increments the counter in
//     `generation` (an atomic add on a shared mapping, `CommitGeneration`) after each commit, and a read
//     whose snapshot saw another value ends it first. A read that finds its counter unchanged reads a
//     snapshot that is at most "just before" a commit whose call has not yet returned: linearizable;
//   - a value file missing or of the wrong size (the row may predate a concurrent replace): the read is
//     retried in a fresh snapshot; the row is removed as damaged only if, under `write.lock` and in a
//     write transaction, it still names that file and the file is still missing or of the wrong size;
//   - 1,000 reads or 50 ms (`snapshotReadLimit`, `snapshotAgeLimit`): bounds how long a WAL checkpoint
//     waits for us and how stale a read can be should a writer die between COMMIT and its increment or
//     the generation file be replaced under us; `DiskCache` also ends a snapshot idle for 50 ms;
//   - an error, `close()` or `endReadSnapshot()`.
// A process killed while it holds a snapshot holds nothing afterwards: the kernel drops its `fcntl` locks,
// and a read mark whose lock is free is not in use for SQLite. A missing, short or foreign `generation` file
// is recreated with a fresh counter at open; one removed or replaced while in use is noticed when a
// snapshot begins or before a write (the path is looked at at most every 50 ms) and mapped again.
// Writers of an older version of this code do not increment the counter: their commits are seen within
// the limits above.
//
// Errors and recovery: only damage (SQLITE_CORRUPT, SQLITE_NOTADB, a failed check) rebuilds the manifest,
// and only an instance holding `lock` exclusively (no other instance has the folder open) rebuilds;
// every other failure is thrown and changes nothing. Instances coordinate through two more counters in
// `generation`: see "Recovery" at the top of KVStorage+Recovery.swift.
//
// Durability: a process crash (SIGKILL included) loses no acknowledged write. A power loss:
//   - with `syncsFiles` (`synchronous=FULL`, value files fsynced before their rename, `data/` fsynced after
//     it and before the COMMIT; the old file leaves `data/` only after the COMMIT is durable) loses no
//     acknowledged write either: each key has its old value or its new one;
//   - without it (the default: `synchronous=NORMAL`, nothing fsynced by us) may lose the latest writes:
//     their commits may not be on disk, and a value file written or moved to trash just before may be
//     missing, so a key written, replaced or removed shortly before the power loss may read back as
//     absent. The store still opens consistent (rows whose file is missing or of the wrong size are
//     removed) and every value read back has its recorded size.

/// A key-value store in one folder: a SQLite manifest plus value files (YYKVStorage).
///
/// ```swift
/// let storage = try KVStorage(path: "/var/cache/app/images", type: .mixed)
/// try storage.save(key: "k", value: bytes, filename: "0cc175b9…", extendedData: nil)
/// let item = try storage.item(forKey: "k")
/// ```
///
/// `.sqlite` keeps every value inline in the manifest, `.file` every value in a file, and `.mixed` puts a
/// value in a file when the caller passes a filename and inline otherwise (`DiskCache` passes one above
/// its `inlineThreshold`).
///
/// Consecutive reads share one SQLite read transaction (a snapshot) until this instance writes, any writer
/// of the folder (in any process) commits, a value file turns out missing, 1,000 reads or 50 ms pass, or
/// `endReadSnapshot()` is called: a read never misses a write whose call returned before the read began
/// (a writer killed between its COMMIT and its generation increment is seen within those limits). See
/// "Reads" at the top of KVStorage.swift.
///
/// - Important: Not thread-safe: use one instance from one thread at a time. `DiskCache` owns one and
///   serialises it. Several instances (in several processes) may share a folder: SQLite locks the manifest,
///   writers serialise on a write transaction, and only the first opener cleans up after crashes. Call
///   `endReadSnapshot()` before leaving an instance idle for long (`DiskCache` does it for you): an open
///   snapshot holds back WAL checkpoints of the other instances until this one reads, writes or closes.
public final class KVStorage {
    /// Where values are kept.
    public enum StorageType: Sendable, Equatable {
        /// Every value in a file under `data/`; saves need a filename.
        case file
        /// Every value inline in the manifest; filenames are ignored.
        case sqlite
        /// In a file when a filename is given, else inline.
        case mixed
    }

    /// The folder.
    public let path: String
    /// Where values are kept.
    public let type: StorageType
    /// Whether value files are `fsync`ed before they are renamed into place, `data/` after the rename, and the
    /// manifest syncs fully (`synchronous=FULL`): no acknowledged write is lost on power loss. `false` by
    /// default: without it every write is still atomic and consistent after a process crash, but a power
    /// loss may lose the latest writes (a key written, replaced or removed just before may read back absent).
    /// See "Durability" at the top of KVStorage.swift.
    public let syncsFiles: Bool
    /// What went wrong and was repaired, at open or later by the recovery protocol (a damaged manifest moved
    /// aside and recreated, or a missing manifest), or `nil`. Also logged as an error.
    public internal(set) var recoveryError: KVCacheError?

    var database: SQLiteDatabase
    let io: FileIO
    let faults: KVStorageFaults?
    /// The advisory lock file descriptor (shared lock held while open).
    var lockDescriptor: Int32 = -1
    /// `<path>/write.lock`, held around every move of a value file (see `withFileLock`).
    let fileLockDescriptor: Int32
    var fileLockDepth = 0
    /// Reads not yet appended to `access_log`: appended in one transaction when 1,024 keys are pending,
    /// before evictions and at close. Keyed by the key's bytes (`ExactKey`), as the manifest is. (Keyed by
    /// the row's `rowid`, an integer hash, a read cost 1–2 % less at 1k entries, but a row another instance
    /// replaced meanwhile (a new `rowid`) lost the key's pending time, and the entries of rows removed or
    /// saved again counted against `pendingAccessHardLimit` until a flush: `KVCacheRowidAccessReviewTests`.)
    var pendingAccessTimes: [ExactKey<String>: Int64] = [:]
    /// Set by a trim while it checkpoints between two steps (see KVStorage+Checkpoint.swift).
    var trimDefersAccessFlush = false
    /// Set by `DiskCache` while its background checkpoint runs.
    var checkpointDefersAccessFlush = false
    /// While either is set, or the WAL is long (`walIsLong`), reads append their access times only once
    /// `pendingAccessHardLimit` keys are pending, and owed folds wait: no optional commit of this instance
    /// races a checkpoint.
    var defersAccessFlush: Bool { trimDefersAccessFlush || checkpointDefersAccessFlush || walIsLong }
    /// Set when reads find the WAL long while `access_log` is full (nothing of ours commits then): the
    /// next `takeCheckpointDue()` asks for a checkpoint, whose result may end both (KVStorage+Checkpoint).
    var checkpointWanted = false
    /// Set by `DiskCache`: a flush of access times that finds `access_log` past its cap records the batches
    /// it owes in `owedLogFolds` instead of folding them inside the read or write that flushed; the owner
    /// folds them later, one batch per hold of its lock (see KVStorage+AccessTime.swift).
    var defersLogFolds = false
    /// Batches of `access_log` a flush left to fold (with `defersLogFolds`): what the log is over its cap.
    var owedLogFolds = 0
    /// Set (with `defersLogFolds`) when a flush finds or leaves `access_log` past its cap, cleared by the fold
    /// that brings it back under: meanwhile reads append nothing (see KVStorage+AccessTime.swift).
    var accessLogFull = false
    /// Reads whose access time was not recorded because `access_log` was full and `pendingAccessHardLimit`
    /// keys were pending (tests, diagnostics).
    var accessTimesDropped = 0
    /// Keeps background checkpoints out of the reopen's window and after `close()` (KVStorage+Checkpoint).
    let checkpointGate = CheckpointGate()
    /// Whether this instance's `reopenManifest` holds `checkpointGate` (a reopen nested in a reopen's
    /// cleanup does not take it again).
    var holdsCheckpointGate = false
    var lastStamp: Int64 = 0
    /// Whether a file went to `trash/` since `takeTrashFlag()` last ran (so `DiskCache` schedules a trash
    /// sweep only when there is something to sweep).
    var hasNewTrash = false
    var isClosed = false
    /// This instance's slot in `<path>/instances` (see KVStorage+CleanShutdown), `nil` until the open takes it.
    var instanceSlots: InstanceSlots?
    /// Whether `close()` marks the slot free: set once the open completed (an open that failed after it
    /// may have changed the store leaves it marked open, so the next exclusive opener cleans up).
    /// What the open did (clean-shutdown bookkeeping; tests).
    var openReport = OpenReport()
    /// What the last crash cleanup did (tests).
    var cleanupReport = CleanupReport()
    /// The intent journal's bookkeeping while `write.lock` is held (see KVStorage+IntentJournal).
    var journalState = IntentJournalState()
    /// Appends to and folds of `access_log` by this instance (tests).
    var accessLogAppends = 0
    var accessLogFolds = 0
    /// The folder's commit generation (`<path>/generation`).
    let generation: CommitGeneration
    /// The read transaction kept across reads.
    var snapshot = ReadSnapshot()
    /// Read snapshots begun so far (tests check that reads share them).
    var snapshotsBegun = 0
    /// Reads one snapshot may serve; 1,000 (tests lower it).
    var snapshotReadLimit = KVStorage.defaultSnapshotReadLimit
    /// Seconds one snapshot may live; 0.05 (tests raise it).
    var snapshotAgeLimit = KVStorage.defaultSnapshotAgeLimit
    /// Seconds of work one step makes at most before it commits: a trim step's removals (at least one, at
    /// most `trimBatch`) and a fold of the access log (at least one row, at most `accessFoldBatch`). The bound
    /// on how long such a step holds the store lock, whatever the machine's speed. Default
    /// `defaultStepDuration` (5 ms); NaN or +infinity: no bound; 0 or negative (-infinity too): one row or
    /// removal per step (`stepDeadline(after:)`).
    var stepDuration = KVStorage.defaultStepDuration
    /// The recovery protocol's bookkeeping (see KVStorage+Recovery.swift).
    var recoveryState = RecoveryState()

    var manifestPath: String { path + "/manifest.sqlite" }
    /// `<path>/data`, `<path>/tmp`, `<path>/trash`: stored, as every file read and write builds a path on them.
    let dataPath: String
    let tmpPath: String
    let trashPath: String

    /// Opens (creating if needed) the store in the folder at `path`.
    ///
    /// The first process to open the folder cleans up after crashes: it removes leftover temporaries, rows
    /// whose file is missing and files no row references. A damaged manifest (SQLITE_CORRUPT, SQLITE_NOTADB,
    /// a failed `quick_check`) is moved aside and recreated by that first opener only (see `recoveryError`
    /// and "Recovery" in KVStorage+Recovery.swift); any other failure (out of descriptors, I/O error, disk
    /// full, busy after 5 s, …) is thrown and changes nothing on disk.
    ///
    /// - Parameters:
    ///   - path: The folder; created if missing, with its missing parents, each owner-only (0700).
    ///   - type: Where values are kept.
    ///   - syncsFiles: `fsync` value files before use (power-loss durability). `false` by default.
    /// - Throws: `KVCacheError` when the folder or the manifest cannot be used now (`.sqlite` keeps the
    ///   SQLite code and, in its message, the errno; `.io` the errno), or when the manifest is damaged and
    ///   other instances have the folder open.
    public convenience init(path: String, type: StorageType, syncsFiles: Bool = false) throws(KVCacheError) {
        try self.init(path: path, type: type, syncsFiles: syncsFiles, faults: nil)
    }

    /// Opens the store with a fault-injection seam (tests).
    init(path: String, type: StorageType, syncsFiles: Bool = false, faults: KVStorageFaults?) throws(KVCacheError) {
        self.path = path
        dataPath = path + "/data"
        tmpPath = path + "/tmp"
        trashPath = path + "/trash"
        self.type = type
        self.syncsFiles = syncsFiles
        self.faults = faults
        self.io = FileIO(faults: faults)
        let io = FileIO(faults: faults)
        for folder in [path, path + "/data", path + "/tmp", path + "/trash"] { try io.makeDirectory(folder) }
        let generation = try CommitGeneration(path: path + "/generation")
        self.generation = generation
        let fileLock = try Self.openFileLock(path + "/write.lock")
        fileLockDescriptor = fileLock
        let lock: Int32, exclusive: Bool
        do {
            (lock, exclusive) = try Self.acquireOpenLock(path + "/lock")
        } catch {
            Glibc.close(fileLock)
            throw error
        }
        let manifestExisted: Bool
        var recovery: KVCacheError?
        // Read before the manifest opens: a request posted after it must be seen.
        recoveryState.seenRequests = generation.recoveryRequests
        recoveryState.seenMapping = generation.mappings
        // The first opener checks and cleans up only after an unclean shutdown (see KVStorage+CleanShutdown):
        // the other instances' slots are read before this one takes its own.
        var slots: InstanceSlots
        let scan: InstanceSlots.Scan, wasClean: Bool, legacyCount: Bool
        do throws(KVCacheError) {
            slots = try InstanceSlots(path: path + "/instances")
            do throws(KVCacheError) {
                scan = exclusive ? try slots.scan() : InstanceSlots.Scan()
                if !exclusive { Self.reapDeadInstances(slots, tmpPath: path + "/tmp", io: io) }
                legacyCount = exclusive && Self.legacyCountIsPositive(lock)
                let claimed = try slots.claim(sync: syncsFiles)
                // Another boot's header: unclean whatever the slots say (see KVStorage+CleanShutdown.swift).
                wasClean = exclusive && claimed && scan.headerValid && !scan.otherBoot && scan.dead.isEmpty && !legacyCount
            } catch {
                slots.release(markFree: true)
                throw error
            }
        } catch {
            Glibc.close(lock)
            Glibc.close(fileLock)
            throw error
        }
        do {
            // An empty file (truncated to nothing) is a new database to SQLite: as good as missing.
            manifestExisted = (try io.fileSize(path + "/manifest.sqlite")).map { $0 > 0 } ?? false
            // Recorded before the manifest is created: an open that fails from here on must leave the next
            // exclusive opener a reason to scan every file (an existing manifest would not tell it).
            if exclusive && !manifestExisted { try Self.requestFullScan(manifestPath: path + "/manifest.sqlite") }
            database = try Self.openManifest(at: path + "/manifest.sqlite", syncsFiles: syncsFiles, faults: faults,
                                             checkIntegrity: exclusive && !wasClean, exclusive: exclusive,
                                             generation: generation, recovery: &recovery)
        } catch {
            slots.release(markFree: true)
            Glibc.close(lock)
            Glibc.close(fileLock)
            throw error
        }
        lockDescriptor = lock
        instanceSlots = slots
        recoveryError = recovery
        // A recreated or missing manifest leaves every value file unreferenced: clean up whatever the count says.
        // An intent journal left by a move that failed is worked off too (a few names).
        let journalPending = exclusive ? try !journalIsEmpty() : false
        let cleansUp = exclusive && (!wasClean || recovery != nil || !manifestExisted || journalPending)
        var checked = false
        if exclusive && !wasClean { checked = try Self.isSmallEnoughToCheckAtOpen(database) }
        openReport = OpenReport(previousShutdownWasClean: wasClean, ranQuickCheck: checked, ranCrashCleanup: cleansUp)
        if exclusive && !cleansUp {
            try removeTemporaries()
        } else if exclusive {
            // Every row and file only when the journal cannot tell (see KVStorage+Cleanup.swift).
            let fullScan = recovery != nil || !manifestExisted || !scan.headerValid || legacyCount || scan.otherBoot
            let orphans: Int
            do {
                orphans = try cleanUpAfterCrash(fullScan: fullScan)
            } catch where SQLiteCode.isCorruption(error) && !recoveryState.needsReopen {
                // `guarded` ran the recovery protocol (it cleaned up again, under the exclusive lock).
                orphans = 0
            }
            if !manifestExisted && orphans > 0 && recoveryError == nil {
                recoveryError = .manifestMissing(orphanFiles: orphans)
                kvLog.error("KVStorage at \(path): \(KVCacheError.manifestMissing(orphanFiles: orphans))")
            }
        }
        if !exclusive, try !journalIsEmpty() { cleanUpJournalBesideOthers() }
        if exclusive {
            // The dead instances are cleaned up after: their slots are free again.
            try instanceSlots?.markCleanedUp(scan)
            try clearLegacyCount()
        }
        try downgradeOpenLock()
    }

    deinit { close() }

    /// Writes pending access times, closes the manifest and releases the folder lock. Idempotent; any later
    /// call fails with a SQLite misuse error.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        checkpointGate.shut()
        endReadSnapshot()
        flushAccessTimes()
        database.close()
        // Also the close of an open that failed (its deinit): a failure is no death. What a failed open leaves
        // to clean up stays on record without its slot: the dead slots it found stay marked until its cleanup
        // succeeded, the journal's records until then too, a foreign header until rewritten, and a missing
        // manifest as a full-scan request (`KVCacheDescriptorExhaustionReviewTests`).
        instanceSlots?.release(markFree: true)
        instanceSlots = nil
        if lockDescriptor >= 0 { Glibc.close(lockDescriptor) }
        lockDescriptor = -1
        Glibc.close(fileLockDescriptor)
    }

    /// A manifest time strictly after the previous one from this instance (so LRU order is exact even
    /// within one microsecond). From the precise wall clock, for reads too: a coarse clock (one kernel tick,
    /// 4 ms here, behind) saved 25 ns a read but stamped reads before they happened, so an age cutoff taken
    /// just before a read removed the value, and another instance's older write outlived our newer read in
    /// an LRU trim (`KVCacheCoarseStampReviewTests`).
    func nextStamp() -> Int64 {
        lastStamp = max(wallClockMicroseconds(), lastStamp + 1)
        return lastStamp
    }

    /// Whether files went to `trash/` since the last call; clears the flag.
    func takeTrashFlag() -> Bool {
        defer { hasNewTrash = false }
        return hasNewTrash
    }

    /// A process-unique name for a temporary or trashed file.
    func uniqueName() -> String {
        // A counter shared by every instance in the process: two instances on one folder naming temporaries
        // in the same microsecond must not pick the same name.
        let counter = Self.fileCounter.wrappingAdd(1, ordering: .relaxed).newValue
        // The slot first: what a killed instance leaves in tmp/ is found by it (`InstanceSlots.reapDead`).
        let owner = instanceSlots?.slot.map(InstanceSlots.temporaryPrefix) ?? "x-"
        return "\(owner)\(getpid())-\(counter)-\(nextStamp())"
    }
}

extension KVStorage {
    /// Numbers temporaries and trashed files, process-wide (see `uniqueName()`).
    static let fileCounter = Atomic<Int>(0)
}

@available(*, unavailable, message: "KVStorage is not thread-safe; use DiskCache to share one")
extension KVStorage: Sendable {}
