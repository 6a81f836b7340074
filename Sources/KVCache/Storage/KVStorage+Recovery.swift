import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Recovery: what happens when an error says the manifest is damaged.
//
// Only SQLITE_CORRUPT and SQLITE_NOTADB (any extended code) and a failed `PRAGMA quick_check` /
// `integrity_check` count as damage. Every other failure, at open or in use (CANTOPEN when the process is
// out of descriptors, IOERR, FULL, NOMEM, PROTOCOL, READONLY, BUSY, LOCKED, …), is thrown as
// `KVCacheError.sqlite` with its code (and the errno under it in the message) and changes nothing on disk:
// the next open, once the cause is gone, finds every value.
//
// A rebuild (the manifest and its -wal/-shm moved aside to `manifest.sqlite.corrupt-<time>`, a new empty
// manifest, every file of data/ trashed as an orphan) is done only by an instance holding `<path>/lock`
// exclusively, that is while no other instance (in any process, or another one in this process) has the
// folder open: nobody can hold a descriptor to the manifest that is moved aside, so nobody can commit
// into it and lose an acknowledged write. (An instance waiting in this protocol has closed its manifest and dropped
// its `flock`, but keeps its slot in `<path>/instances` locked: the exclusive holder knows it is alive and
// does not take it for a crash, see KVStorage+CleanShutdown.swift.) The exclusive holder rebuilds when
//   - at open: configuring the manifest fails with CORRUPT/NOTADB, or `quick_check` fails;
//   - in use: after an operation failed with CORRUPT/NOTADB, it reopens the manifest and either that
//     fails with CORRUPT/NOTADB or `PRAGMA integrity_check` confirms the damage. An error the check does
//     not confirm rebuilds nothing.
// An instance that meets damage while others have the folder open does not rebuild. It increments the
// recovery-request counter in `<path>/generation` (mapped shared, see `CommitGeneration`), closes its
// manifest, drops its shared lock and waits up to `recoveryState.lockWait` (1 s) for the exclusive lock
// or for the recovery epoch (same file) to change. Every other instance compares the request counter with
// the one it saw at its last open before each operation (one atomic load); on a new request it does the
// same: writes its pending access times, closes, drops its lock and waits. The first one to get the
// exclusive lock checks the manifest (`integrity_check`), rebuilds it if the check fails, cleans up like
// an exclusive open, increments the epoch and goes back to a shared lock; the others see the epoch move
// and reopen the same path with a shared lock. An instance whose wait ends without either (another
// instance stayed idle holding the folder) reopens shared and reports the damage as the operation's
// error (`.sqlite` with SQLITE_CORRUPT or SQLITE_NOTADB); the store is repaired at the next such round or
// the next exclusive open.
// An opener without the exclusive lock that meets damage throws it and posts a request the same way.
// Reopening happens only at the start of an operation (the outermost `guarded`), never inside a write
// transaction or while `write.lock` is held. A process killed anywhere in this leaves at worst a manifest
// moved aside (its WAL is moved first) and orphan files, which the next exclusive open removes.

/// The recovery bookkeeping of one `KVStorage` (see "Recovery" in KVStorage+Recovery.swift).
struct RecoveryState {
    /// Nesting of `guarded`: only the outermost call reopens or recovers.
    var depth = 0
    /// The manifest is closed (or was reopened only in part) and must be reopened before the next statement.
    var needsReopen = false
    /// `CommitGeneration.recoveryRequests` when this instance last (re)opened the manifest.
    var seenRequests: UInt64 = 0
    /// `CommitGeneration.mappings` when `seenRequests` was read.
    var seenMapping = 0
    /// Seconds to wait for the folder to ourselves (or another instance's check) when reopening for
    /// recovery: 1 (tests lower it).
    var lockWait = 1.0
    /// Reopens so far (tests check that instances noticed a request).
    var reopens = 0
}

extension KVStorage {
    /// Opens the manifest at open time; see "Recovery" above. With `exclusive`, a damaged manifest is
    /// rebuilt and the cause goes to `recovery`; without, damage is thrown and a recovery requested. Any
    /// other error is thrown and nothing is changed.
    static func openManifest(
        at path: String, syncsFiles: Bool, faults: KVStorageFaults?, checkIntegrity: Bool, exclusive: Bool,
        generation: CommitGeneration, recovery: inout KVCacheError?
    ) throws(KVCacheError) -> SQLiteDatabase {
        do {
            return try configureManifest(at: path, syncsFiles: syncsFiles, faults: faults, checkIntegrity: checkIntegrity)
        } catch where SQLiteCode.isCorruption(error) {
            guard exclusive else {
                kvLog.error("KVStorage: \(error); other instances have \(path) open: asking them to reopen, not rebuilding")
                generation.requestRecovery()
                throw error
            }
            return try rebuildManifest(at: path, syncsFiles: syncsFiles, faults: faults, cause: error,
                                       generation: generation, recovery: &recovery)
        }
    }

    /// Moves the manifest aside and creates an empty one. Only under the exclusive lock.
    static func rebuildManifest(
        at path: String, syncsFiles: Bool, faults: KVStorageFaults?, cause: KVCacheError,
        generation: CommitGeneration, recovery: inout KVCacheError?
    ) throws(KVCacheError) -> SQLiteDatabase {
        // Every value file becomes an orphan: the next cleanup scans data/, even if this process dies first.
        try requestFullScan(manifestPath: path)
        let movedTo = moveManifestAside(path)
        let problem = KVCacheError.manifestRecreated(cause: cause.description, movedTo: movedTo)
        kvLog.error("KVStorage: \(problem)")
        recovery = problem
        let database = try configureManifest(at: path, syncsFiles: syncsFiles, faults: faults, checkIntegrity: false)
        // Readers' snapshots and waiting instances must not keep what they saw of the old manifest.
        generation.advance()
        generation.advanceRecoveryEpoch()
        return database
    }

    /// Runs `body`, one operation on the manifest. The outermost call first reopens the manifest when a
    /// recovery was requested or an earlier reopen failed; when `body` fails with CORRUPT/NOTADB, it runs
    /// the recovery protocol, then rethrows (see "Recovery" above).
    func guarded<T>(_ body: () throws(KVCacheError) -> T) throws(KVCacheError) -> T {
        let outermost = recoveryState.depth == 0
        if outermost { try reopenIfNeeded() }
        recoveryState.depth += 1
        do {
            let result = try body()
            recoveryState.depth -= 1
            return result
        } catch {
            recoveryState.depth -= 1
            if outermost && SQLiteCode.isCorruption(error) { recover(from: error) }
            throw error
        }
    }

    /// Reopens the manifest if another instance asked for it or a previous reopen did not complete.
    func reopenIfNeeded() throws(KVCacheError) {
        guard !isClosed else { return }
        if generation.mappings != recoveryState.seenMapping {
            // The generation file was replaced and mapped again: its counters start over, not a request.
            recoveryState.seenMapping = generation.mappings
            recoveryState.seenRequests = generation.recoveryRequests
        }
        guard recoveryState.needsReopen || generation.recoveryRequests != recoveryState.seenRequests else { return }
        try reopenManifest(cause: nil)
    }

    /// The recovery protocol after `error` (damage) in use. Failures are logged: the caller rethrows `error`,
    /// and the next operation tries to reopen again.
    func recover(from error: KVCacheError) {
        guard !isClosed else { return }
        kvLog.error("KVStorage at \(path): \(error); checking the manifest")
        do {
            try reopenManifest(cause: error)
        } catch {
            kvLog.error("KVStorage at \(path): reopening the manifest failed: \(error)")
        }
    }

    /// Closes the manifest, drops the shared lock, takes the exclusive one if it can (waiting for it when
    /// recovering, see above) and opens the manifest again: checked and rebuilt if damaged when exclusive,
    /// as it is otherwise.
    func reopenManifest(cause: KVCacheError?) throws(KVCacheError) {
        guard holdsCheckpointGate else {
            // No checkpoint connection of this instance may be open while the manifest can be moved aside.
            try checkpointGate.holding { () throws(KVCacheError) in
                holdsCheckpointGate = true
                defer { holdsCheckpointGate = false }
                try reopenManifest(cause: cause)
            }
            return
        }
        recoveryState.depth += 1
        defer { recoveryState.depth -= 1 }
        let asked = generation.recoveryRequests != recoveryState.seenRequests
        if cause == nil && database.isOpen { flushAccessTimes() } else { pendingAccessTimes.removeAll() }
        endReadSnapshot()
        database.close()
        recoveryState.needsReopen = true
        recoveryState.reopens += 1
        flock(lockDescriptor, LOCK_UN)
        let epoch = generation.recoveryEpoch
        var exclusive = flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0
        if !exclusive && (cause != nil || asked) {
            if cause != nil { generation.requestRecovery() }
            // Polls: `flock` cannot wait for "exclusive, or the epoch moved". Rare (damage only) and bounded.
            let deadline = monotonicSeconds() + recoveryState.lockWait
            while !exclusive && generation.recoveryEpoch == epoch && monotonicSeconds() < deadline {
                usleep(1_000)
                exclusive = flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0
            }
        }
        let requests = generation.recoveryRequests
        if exclusive {
            defer {
                do { try downgradeOpenLock() } catch { kvLog.error("KVStorage at \(path): \(error)") }
            }
            var recovery: KVCacheError?
            database = try Self.openManifest(at: manifestPath, syncsFiles: syncsFiles, faults: faults, checkIntegrity: false,
                                             exclusive: true, generation: generation, recovery: &recovery)
            if recovery == nil, let damage = try integrityProblem() {
                database.close()
                database = try Self.rebuildManifest(at: manifestPath, syncsFiles: syncsFiles, faults: faults, cause: damage,
                                                    generation: generation, recovery: &recovery)
            } else if recovery == nil {
                generation.advanceRecoveryEpoch()
            }
            if let recovery { recoveryError = recovery }
            // Instances waiting like this one keep their slots locked: only dead ones are cleaned up after.
            let scan = try instanceSlots?.scan() ?? InstanceSlots.Scan(headerValid: true)
            _ = try cleanUpAfterCrash(fullScan: recovery != nil || !scan.headerValid || scan.otherBoot)
            try instanceSlots?.markCleanedUp(scan)
        } else {
            try downgradeOpenLock() // takes it shared (waiting for an exclusive holder)
            var unused: KVCacheError?
            database = try Self.openManifest(at: manifestPath, syncsFiles: syncsFiles, faults: faults, checkIntegrity: false,
                                             exclusive: false, generation: generation, recovery: &unused)
        }
        recoveryState.seenRequests = requests
        recoveryState.seenMapping = generation.mappings
        recoveryState.needsReopen = false
    }

    /// `PRAGMA integrity_check` (which, unlike `quick_check`, also compares indexes with their table): the
    /// damage it reports, or `nil` when the manifest is sound.
    func integrityProblem() throws(KVCacheError) -> KVCacheError? {
        do {
            let result = try database.textRows("PRAGMA integrity_check(10)")
            guard result != ["ok"] else { return nil }
            return .sqlite(code: SQLiteCode.corrupt, message: result.prefix(3).joined(separator: "; "),
                           operation: "PRAGMA integrity_check")
        } catch where SQLiteCode.isCorruption(error) {
            return error
        }
    }
}
