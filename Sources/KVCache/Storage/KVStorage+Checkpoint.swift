import Foundation

// WAL checkpoints off the store lock. SQLite's automatic checkpoint runs inside the `COMMIT` that takes
// the WAL past 1,000 frames: it copies the WAL back into the database and `fsync`s both, which in a
// multi-gigabyte store on a busy disk took hundreds of milliseconds, while `DiskCache` held its store lock
// (every read waited). `DiskCache` therefore turns it off on its connection (`deferCheckpoints()`): the
// WAL hook only counts the frames each commit appends, and once `checkpointFrames` have accumulated
// `DiskCache` runs a PASSIVE checkpoint from a second, short-lived connection on a background queue
// (`checkpoint(manifestAt:)`), outside the lock. PASSIVE waits for nobody: it copies what no reader still
// needs, and the next writer restarts the WAL once all of it is copied. A commit that finds the WAL at
// `inlineCheckpointFrames` frames (the background fell behind, or another process holds readers open)
// checkpoints itself as before, so the WAL stays bounded (about 64 MB) whatever happens.
//
// The WAL only restarts (is written again from its start) at a commit that finds all of it copied back, so
// a checkpoint racing a stream of commits never lets it restart, and it grows to the bound. A trim is such
// a stream (one commit per step), so `DiskCache`'s trim checkpoints on its own thread between two steps,
// with the store lock released: reads go on, and keep their access times in memory meanwhile
// (`defersAccessFlush`, up to `pendingAccessHardLimit` keys) so that no commit of this instance races the
// checkpoint; the next step's commit restarts the WAL. A checkpoint makes up to `checkpointPasses` passes
// while commits (of other instances) keep arriving.
//
// Durability is unchanged: a checkpoint is SQLite's, with its own `fsync`s, on the same files, whichever
// connection runs it; a crash during one loses nothing (the WAL keeps every frame until it restarts).

extension KVStorage {
    /// WAL frames (pages) appended before a background checkpoint is due: SQLite's automatic default.
    static let checkpointFrames: Int64 = 1_000
    /// WAL frames at which a commit checkpoints itself (about 64 MB with 4 KB pages).
    static let inlineCheckpointFrames: Int32 = 16_384

    /// Turns off the automatic checkpoint inside commits (see the top of KVStorage+Checkpoint.swift); the
    /// owner then calls `takeCheckpointDue()` after each use and runs `checkpoint(manifestAt:)` elsewhere.
    /// Idempotent; `takeCheckpointDue()` repeats it on a manifest reopened by the recovery protocol.
    func deferCheckpoints() {
        database.deferCheckpoints(inlineBound: Self.inlineCheckpointFrames)
    }

    /// Whether `checkpointFrames` frames were appended since the last time it returned `true` (or a
    /// checkpoint is wanted: `checkpointWanted`).
    func takeCheckpointDue() -> Bool {
        guard database.isOpen else { return false }
        if database.walState == nil { deferCheckpoints() }
        if checkpointWanted {
            checkpointWanted = false
            return true
        }
        guard let state = database.walState, state.uncheckpointed >= Self.checkpointFrames else { return false }
        return database.takeUncheckpointedFrames() > 0
    }

    /// Whether the WAL, as this connection last saw it, holds half of `inlineCheckpointFrames` or more and
    /// is not known to be all copied back (once it is, the next commit restarts it): the background
    /// checkpoint is behind (its queue starved of CPU, or still copying). Access-time commits, which are
    /// optional, then wait (`defersAccessFlush`): they alone took the WAL of a stream of reads to the bound
    /// where a commit checkpoints under the store lock (`KVCacheReadStreamWALBoundReviewTests` on a loaded
    /// machine). Real writes still commit.
    var walIsLong: Bool {
        guard let state = database.walState else { return false }
        return state.frames >= Self.inlineCheckpointFrames / 2 && state.backfilled < state.frames
    }

    /// Whether the WAL, as this connection last saw it, holds `checkpointFrames` frames or more and is not
    /// known to be all copied back: a trim checkpoints it before its first step (see `DiskCacheCore.trim`).
    var walHoldsUncopiedFrames: Bool {
        guard let state = database.walState else { return false }
        return Int64(state.frames) >= Self.checkpointFrames && state.backfilled < state.frames
    }

    /// What this connection knows of its WAL, taken under the store lock just before a checkpoint begins, for
    /// `noteCheckpoint` to tell what the checkpoint's result is about.
    func walSight() -> WALSight {
        WALSight(identity: database.walState?.identity, frames: database.walState?.frames ?? 0, restarts: database.walState?.restarts ?? 0)
    }

    /// Records what a checkpoint (of any connection, run outside the store lock) copied back: `result`
    /// from `checkpoint(manifestAt:)`, `seen` what this connection knew when it began (`walSight()`).
    ///
    /// The result is about the WAL as the checkpoint found it: commits of ours made while it ran are not in
    /// `result.log` (a WAL at 15,715 frames noted as 15,553 "all copied back" in `make bench` kept a trim from
    /// copying it first, and the trim's steps took it to the bound where a commit checkpoints under the lock).
    func noteCheckpoint(_ result: (log: Int32, checkpointed: Int32), seen: WALSight) {
        guard let state = database.walState else { return }
        // Another WAL than the one the checkpoint copied: this connection restarted it meanwhile, or the
        // manifest was reopened (a fresh count). Nothing is known of the new one.
        guard seen.identity == state.identity, seen.restarts == state.restarts else { return }
        if result.log < seen.frames {
            // Fewer frames than this connection had committed before the checkpoint began: another
            // connection's commit restarted the WAL after ours, and this connection's count is stale (left so,
            // it would keep `walIsLong` set until our next commit, and with `access_log` full nothing of ours
            // would commit). Commits of ours since then are in the new WAL too, but no count of them is
            // known: they are counted at our next commit. Unless we committed while it ran (our count moved on
            // and the hook saw no restart): then our count is the newer one, and those frames came after what
            // the checkpoint copied (`KVCacheCheckpointNoteReviewTests`).
            if state.frames == seen.frames { state.frames = result.log }
            state.backfilled = min(result.checkpointed, state.frames)
        } else {
            // Never past this connection's own count: frames other connections appended after ours and the
            // checkpoint copied are counted once our next commit's note comes.
            state.backfilled = min(max(state.backfilled, result.checkpointed), state.frames)
        }
    }

    /// Runs a PASSIVE checkpoint of the manifest at `path` from a connection of its own (opened and closed
    /// here; never creates a missing manifest). Safe on any thread, beside any number of connections.
    /// Returns (frames in the WAL, frames checkpointed).
    static func checkpoint(manifestAt path: String) throws(KVCacheError) -> (log: Int32, checkpointed: Int32) {
        let database = try SQLiteDatabase(path: path, busyTimeout: 1_000, faults: nil, create: false)
        defer { database.close() }
        // A connection opens the WAL with its first read; a checkpoint before it would find no WAL.
        _ = try database.textRows("PRAGMA schema_version")
        // Commits made while it copied are copied by another pass (shorter: only those): the WAL restarts
        // at the next commit only once a pass has copied all of it.
        var result = try database.checkpointPassive()
        for _ in 1..<checkpointPasses where result.checkpointed < result.log {
            let previous = result
            result = try database.checkpointPassive()
            // A reader holds frames back (or the WAL restarted meanwhile): passes would not get further.
            if result.checkpointed <= previous.checkpointed { break }
        }
        return result
    }

    /// PASSIVE passes one `checkpoint(manifestAt:)` makes at most while commits keep arriving.
    static let checkpointPasses = 4
}

/// Keeps one instance's background checkpoints inside the time it holds its open lock.
///
/// A checkpoint opens a connection of its own by the manifest's path. The recovery protocol may move that
/// manifest aside and create a new one (this instance's `reopenManifest`, or another process's exclusive
/// rebuild while this instance waits without its open lock): a connection opened on the old file that then
/// finds the new file's WAL could copy the new WAL's frames into the old file and mark them copied, and the
/// next commit would restart the WAL over them — acknowledged writes lost. So a checkpoint runs only while
/// the gate is open and holds it meanwhile; `reopenManifest` holds it for its whole course (from dropping
/// the open lock to retaking it), and `close()` shuts it for good. Thread-safe.
final class CheckpointGate: Sendable {
    private let isOpen = Mutex(true)

    /// Runs `body` (a checkpoint) unless the instance closed; a reopen waits for it meanwhile.
    func runIfOpen(_ body: () -> Void) {
        isOpen.withLock { open in if open { body() } }
    }

    /// Runs `body` (a reopen of the manifest) with no checkpoint running or starting meanwhile.
    func holding(_ body: () throws(KVCacheError) -> Void) throws(KVCacheError) {
        try isOpen.withLock { (_: inout Bool) throws(KVCacheError) in try body() }
    }

    /// Lets no more checkpoints run (waits for one running).
    func shut() {
        isOpen.withLock { $0 = false }
    }
}
