import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The read transaction a `KVStorage` keeps open across consecutive reads (see "Reads" in `KVStorage`).
struct ReadSnapshot {
    /// Whether a read transaction is open on the connection.
    var isOpen = false
    /// The commit generation seen just before the transaction began.
    var generation: UInt64 = 0
    /// Reads served by this transaction.
    var reads = 0
    /// When it began, in `monotonicSeconds()`.
    var began = 0.0
}

extension KVStorage {
    /// Reads one snapshot may serve before it is renewed (a bound on staleness should a writer die between
    /// its commit and its generation increment, and on how long a WAL checkpoint may wait for us).
    static let defaultSnapshotReadLimit = 1_000
    /// Seconds one snapshot may live before it is renewed, for the same reasons.
    static let defaultSnapshotAgeLimit = 0.05

    /// Makes the next read run in a current snapshot: keeps the open one while the folder's commit
    /// generation is unchanged and it is within its limits, else ends it and begins another.
    func beginRead() throws(KVCacheError) {
        if snapshot.isOpen {
            if generation.current == snapshot.generation && snapshot.reads < snapshotReadLimit
                && monotonicSeconds() - snapshot.began < snapshotAgeLimit {
                snapshot.reads += 1
                return
            }
            endReadSnapshot()
        }
        guard database.isInAutocommit else { return } // inside a write transaction: reads see it
        generation.revalidate()
        // The generation is read before the snapshot is taken (at the first SELECT): a commit in between
        // makes the next read renew it, never the other way round.
        let seen = generation.current
        try database.executePrepared(.beginRead)
        snapshot = ReadSnapshot(isOpen: true, generation: seen, reads: 1, began: monotonicSeconds())
        snapshotsBegun += 1
    }

    /// Ends the read snapshot, if one is open, so the next read sees every commit. Called before every write
    /// on this connection (a write needs the newest snapshot), when a value file turns out missing (the row
    /// may be from before a concurrent replace), on errors and at close. `DiskCache` also calls it when its
    /// store has been idle for `defaultSnapshotAgeLimit`, so an idle process never holds back WAL checkpoints.
    ///
    /// A failure is logged: a connection SQLite has already taken out of its transaction has nothing to end.
    public func endReadSnapshot() {
        guard snapshot.isOpen else { return }
        snapshot.isOpen = false
        guard database.isOpen, !database.isInAutocommit else { return }
        do {
            try database.executePrepared(.endRead)
        } catch {
            kvLog.warning("KVStorage at \(path): ending the read snapshot failed: \(error)")
        }
    }

    /// Whether a read snapshot is open (for `DiskCache`'s idle release and tests).
    var hasReadSnapshot: Bool { snapshot.isOpen }

    /// Seconds since the open read snapshot began, or `nil` when none is open.
    var readSnapshotAge: Double? { snapshot.isOpen ? monotonicSeconds() - snapshot.began : nil }

    /// Runs `body`, a read, in the current snapshot; ends the snapshot if the read fails (so a failure is
    /// never cached in a stale transaction).
    func reading<T>(_ body: () throws(KVCacheError) -> T) throws(KVCacheError) -> T {
        do {
            try beginRead()
            return try body()
        } catch {
            endReadSnapshot()
            throw error
        }
    }

    /// Prepares a write on this connection: ends the read snapshot (a write transaction must start from
    /// the newest snapshot, and our next read must see our write) and notices a replaced generation file.
    func prepareWrite() {
        endReadSnapshot()
        generation.revalidate()
    }

    /// Announces a commit to every reader of the folder, in every process.
    func didCommit() {
        generation.advance()
    }
}
