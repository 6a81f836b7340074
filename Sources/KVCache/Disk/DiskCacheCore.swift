import Dispatch
import Foundation
import Synchronization

/// The shared state behind every `DiskCache` handle for one folder: the `KVStorage` (serialised by a
/// `Mutex`), the limits, and the background trim and trash loops.
///
/// - Important: Thread-safe. `KVStorage` is not, so it only lives inside `storage`'s lock.
final class DiskCacheCore: Sendable {
    struct Limits {
        var countLimit = Int.max
        var costLimit = Int64.max
        var ageLimit = Double.infinity
        var freeDiskSpaceLimit: Int64 = 0
        var freeDiskSpaceVolumeShare = DiskCache.defaultFreeDiskSpaceVolumeShare
        var autoTrimInterval = 60.0
        var keyLengthLimit = DiskCache.defaultKeyLengthLimit
        var extendedDataSizeLimit = DiskCache.defaultExtendedDataSizeLimit
        var filename: (@Sendable (String) -> String)?
    }

    /// Throws `.keyTooLong` or `.extendedDataTooLarge` when `key` or `extendedData` is over its limit.
    func checkSizes(key: String, extendedData: Data?) throws(KVCacheError) {
        let (keyLimit, dataLimit) = limits.withLock { ($0.keyLengthLimit, $0.extendedDataSizeLimit) }
        let keyLength = key.utf8.count
        if keyLength > keyLimit { throw .keyTooLong(length: keyLength, limit: keyLimit) }
        if let extendedData, extendedData.count > dataLimit {
            throw .extendedDataTooLarge(size: extendedData.count, limit: dataLimit)
        }
    }

    let path: String
    let inlineThreshold: Int
    let storage: Mutex<KVStorage>
    let limits = Mutex(Limits())
    /// Runs the completion-handler and async APIs (concurrent; the storage lock serialises them).
    let queue: DispatchQueue
    let trashQueue: DispatchQueue
    private let trashScheduled = Atomic(false)
    private let snapshotReleaseScheduled = Atomic(false)
    /// Runs the WAL checkpoints, outside the store lock (see KVStorage+Checkpoint.swift).
    let checkpointQueue: DispatchQueue
    /// Runs the auto-trim loop (serial). A trim of a large store blocks on the disk for seconds; on a global
    /// queue it would hold one of the few threads (as many as the cores) that every other task of that
    /// priority in the process shares.
    let trimQueue: DispatchQueue
    /// The auto-trim loop's round: a change of `autoTrimInterval` starts a new round at the new interval, and
    /// the pending round of the old one, when it fires, sees that it is stale and ends.
    private let autoTrimRound = Atomic(0)
    /// When the loop's last trim began or ended (or the core opened), in `DispatchTime` uptime nanoseconds: a
    /// round fires one interval after it, not one interval after the set that started the round. Counted
    /// from the set, every set (even of the same value) pushed the next trim a whole interval away, and sets
    /// more often than the interval (code that configures each handle it opens) starved the loop for good
    /// (`DiskCacheAutoTrimReviewTests`).
    private let autoTrimAnchor = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)
    /// Consecutive failed auto-trims (see `logsAutoTrimFailure`), 0 after a trim that succeeds.
    let autoTrimFailures = Atomic(0)
    private let checkpointScheduled = Atomic(false)
    private let logFoldsScheduled = Atomic(false)
    /// Every background task runs through it; `close()` shuts it (see `BackgroundWork`).
    let background = BackgroundWork()
    /// Called (outside the store lock) after each step of a trim that has more to do, with the number of
    /// steps so far (tests observe that the lock is released between steps).
    let trimStepHook = Mutex<(@Sendable (Int) -> Void)?>(nil)

    init(path: String, inlineThreshold: Int) throws(KVCacheError) {
        self.path = path
        self.inlineThreshold = max(0, inlineThreshold)
        let type: KVStorage.StorageType = inlineThreshold <= 0 ? .file : inlineThreshold == .max ? .sqlite : .mixed
        let opened = try KVStorage(path: path, type: type)
        opened.deferCheckpoints()
        opened.defersLogFolds = true
        storage = Mutex(opened)
        queue = DispatchQueue(label: "webimage.kvcache.disk", attributes: .concurrent)
        trashQueue = DispatchQueue(label: "webimage.kvcache.trash", qos: .utility)
        checkpointQueue = DispatchQueue(label: "webimage.kvcache.checkpoint", qos: .utility)
        trimQueue = DispatchQueue(label: Self.trimQueueLabel, qos: .utility)
        scheduleEmptyTrash()
        scheduleAutoTrim(round: 0)
    }

    /// Closes the store for good, on the calling thread: lets no background task start, waits for the running
    /// ones (a trim stops after its current step), then writes the pending access times and closes the
    /// manifest. Called when the last `DiskCache` handle for the folder is released
    /// (`DiskCacheRegistry.releaseHandle`), so the folder is free the moment that release returns.
    /// Idempotent. Called from inside one of this core's own background tasks, it waits for the others only
    /// (see `BackgroundWork.close()`).
    func close() {
        background.close()
        storage.withLock { $0.close() }
    }

    /// Runs `body` with the storage, holding the lock. When the storage is left holding a read snapshot,
    /// makes sure a release is scheduled for when it goes idle; when its commits filled the WAL enough,
    /// schedules a checkpoint (both run after the lock is released).
    func withStorage<T>(_ body: (KVStorage) throws(KVCacheError) -> T) throws(KVCacheError) -> sending T {
        nonisolated(unsafe) var holdsSnapshot = false
        nonisolated(unsafe) var checkpointDue = false
        nonisolated(unsafe) var foldsOwed = false
        let value: T
        do {
            value = try storage.withLock { (storage: inout KVStorage) throws(KVCacheError) -> sending T in
                defer {
                    checkpointDue = storage.takeCheckpointDue()
                    foldsOwed = storage.owedLogFolds > 0 && !storage.defersAccessFlush
                }
                nonisolated(unsafe) let result = try body(storage)
                holdsSnapshot = storage.hasReadSnapshot
                return result
            }
        } catch {
            if checkpointDue { scheduleCheckpoint() }
            if foldsOwed { scheduleLogFolds() }
            throw error
        }
        if holdsSnapshot { scheduleSnapshotRelease() }
        if checkpointDue { scheduleCheckpoint() }
        if foldsOwed { scheduleLogFolds() }
        return value
    }

    /// Folds the batches of `access_log` a flush left (`KVStorage.owedLogFolds`) on `checkpointQueue`, one
    /// batch per task and per hold of the store lock, so no read or write waits for more than one batch and
    /// the checkpoints their commits make due run in between (coalesced: one pending task at a time). During
    /// a trim too, between its steps (the log would otherwise grow by every read for as long as the trim
    /// lasts: `KVCacheAccessLogDuringTrimReviewTests`), but never while the trim checkpoints between two
    /// steps: the trim sets `trimDefersAccessFlush` in the same hold of the lock as its step, and a fold checks it
    /// under the lock, so no commit of ours races that checkpoint.
    func scheduleLogFolds() {
        guard logFoldsScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        // Weakly, as the checkpoints: the last handle's core must not be freed here.
        checkpointQueue.async { [weak self] in
            guard let self else { return }
            self.logFoldsScheduled.store(false, ordering: .releasing)
            self.background.run { self.foldOwedBatch() }
        }
    }

    /// One owed batch; `withStorage` schedules a checkpoint if due, then the next batch.
    private func foldOwedBatch() {
        do {
            try withStorage { (storage) throws(KVCacheError) in
                guard storage.owedLogFolds > 0, !storage.defersAccessFlush else { return }
                storage.owedLogFolds -= 1
                if try !storage.foldAccessLogBatch() { storage.owedLogFolds = 0 }
            }
        } catch {
            kvLog.warning("DiskCache at \(path): folding access times failed: \(error)")
        }
    }

    /// Checkpoints the manifest's WAL soon on `checkpointQueue`, from a connection of its own, outside the
    /// store lock (coalesced: one pending checkpoint at a time). See KVStorage+Checkpoint.swift.
    func scheduleCheckpoint() {
        guard checkpointScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let gate = storage.withLock { $0.checkpointGate }
        // Weakly, as the trash sweep.
        checkpointQueue.async { [weak self] in
            guard let self else { return }
            self.checkpointScheduled.store(false, ordering: .releasing)
            self.background.run { self.checkpointInBackground(gate: gate) }
        }
    }

    private func checkpointInBackground(gate: CheckpointGate) {
        // Meanwhile reads keep their access times in memory and no fold commits (as during a trim's
        // checkpoint): a stream of reads alone was a stream of commits the checkpoint never caught up
        // with, and the WAL grew to the bound where a commit checkpoints under the store lock
        // (`KVCacheReadStreamWALBoundReviewTests`). Writes still commit: for a stream of them that bound
        // is the fallback.
        let seen = storage.withLock { storage -> WALSight in
            storage.checkpointDefersAccessFlush = true
            return storage.walSight()
        }
        let result = Self.checkpoint(path, gate: gate)
        endAccessFlushDeferral(byTrim: false, checkpoint: result.map { ($0, seen) })
    }

    /// Clears one reason to defer access-time flushes (a trim's or the background checkpoint's, each its
    /// own flag, so neither ends the other's); when none is left, schedules the folds owed meanwhile.
    /// `checkpoint`: what a checkpoint that just ran copied back (see `KVStorage.walIsLong`).
    private func endAccessFlushDeferral(
        byTrim: Bool, checkpoint: ((log: Int32, checkpointed: Int32), seen: WALSight?)? = nil
    ) {
        let foldsOwed = storage.withLock { storage -> Bool in
            if let checkpoint, let seen = checkpoint.seen { storage.noteCheckpoint(checkpoint.0, seen: seen) }
            if byTrim { storage.trimDefersAccessFlush = false } else { storage.checkpointDefersAccessFlush = false }
            return storage.owedLogFolds > 0 && !storage.defersAccessFlush
        }
        if foldsOwed { scheduleLogFolds() }
    }

    /// Checkpoints the manifest on the calling thread (never under the store lock) and notes what it copied
    /// back (see `KVStorage.noteCheckpoint`).
    private func checkpointOnThisThread() {
        let (gate, seen) = storage.withLock { ($0.checkpointGate, $0.walSight()) }
        if let result = Self.checkpoint(path, gate: gate) {
            storage.withLock { $0.noteCheckpoint(result, seen: seen) }
        }
    }

    /// Checkpoints the manifest in the folder at `path` on the calling thread (never under the store lock),
    /// unless the instance whose `gate` it is has closed (see `CheckpointGate`).
    /// Returns (frames in the WAL, frames checkpointed), `nil` when it did not run or failed.
    @discardableResult
    static func checkpoint(_ path: String, gate: CheckpointGate) -> (log: Int32, checkpointed: Int32)? {
        var result: (log: Int32, checkpointed: Int32)?
        gate.runIfOpen { result = checkpointNow(path) }
        return result
    }

    private static func checkpointNow(_ path: String) -> (log: Int32, checkpointed: Int32)? {
        do {
            return try KVStorage.checkpoint(manifestAt: path + "/manifest.sqlite")
        } catch {
            // Busy (another checkpoint runs) or gone (a recovery moved it aside): the next one, or a commit at
            // the bound, catches up.
            kvLog.debug("DiskCache at \(path): WAL checkpoint skipped: \(error)")
            return nil
        }
    }

    /// Ends the storage's read snapshot once it is `KVStorage.defaultSnapshotAgeLimit` old (checked that often
    /// while one is open; coalesced: one pending check at a time), so an idle cache never holds back the
    /// WAL checkpoints of other processes. A busy reader renews its snapshot itself at that age.
    func scheduleSnapshotRelease() {
        guard !snapshotReleaseScheduled.load(ordering: .relaxed),
              snapshotReleaseScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + KVStorage.defaultSnapshotAgeLimit) { [weak self] in
            guard let self else { return }
            self.snapshotReleaseScheduled.store(false, ordering: .releasing)
            self.background.run {
                let stillOpen = self.storage.withLock { storage -> Bool in
                    if let age = storage.readSnapshotAge, age >= KVStorage.defaultSnapshotAgeLimit * 0.9 { storage.endReadSnapshot() }
                    return storage.hasReadSnapshot
                }
                if stillOpen { self.scheduleSnapshotRelease() }
            }
        }
    }

    /// The file name for `key`: the caller's closure, or the MD5 of the key in hex.
    func filename(forKey key: String) -> String {
        limits.withLock { $0.filename }?(key) ?? MD5.hex(key)
    }

    /// Empties `trash/` soon on the background queue (coalesced: one pending sweep at a time).
    func scheduleEmptyTrash() {
        guard trashScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let path = self.path
        // Weakly: the core is closed when its last handle goes (`close()`), and what it left in `trash/` the
        // next opener sweeps.
        trashQueue.async { [weak self] in
            guard let self else { return }
            self.trashScheduled.store(false, ordering: .releasing)
            self.background.run {
                do {
                    try KVStorage.emptyTrash(atPath: path)
                } catch {
                    kvLog.error("DiskCache at \(path): emptying trash failed: \(error)")
                }
            }
        }
    }

    /// The label of `trimQueue`.
    static let trimQueueLabel = "webimage.kvcache.trim"

    /// Sets the seconds between background trims and starts a new round of the loop at that interval at once
    /// (the pending round, at the old interval, ends when it fires). The new round's first trim comes one new
    /// interval after the last trim (or the open), at once if that is past: a set never postpones it further.
    func setAutoTrimInterval(_ interval: Double) {
        limits.withLock { $0.autoTrimInterval = max(0.01, interval) }
        let round = autoTrimRound.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        scheduleAutoTrim(round: round)
    }

    /// The background trim loop, round `round`: every `autoTrimInterval`, trims to the limits on `trimQueue`,
    /// until the core closes or a newer round starts. Holds the core weakly.
    ///
    /// A failure is logged as an error the first time and then once every `autoTrimFailureLogPeriod` failures
    /// in a row (the others at debug level): a folder removed under a live cache fails every round until the
    /// cache is released, and one error a minute for it would flood the log.
    private func scheduleAutoTrim(round: Int) {
        let interval = limits.withLock { $0.autoTrimInterval }
        let anchor = DispatchTime(uptimeNanoseconds: autoTrimAnchor.load(ordering: .relaxed))
        trimQueue.asyncAfter(deadline: anchor + interval) { [weak self] in
            guard let self, self.autoTrimRound.load(ordering: .acquiring) == round else { return }
            // A set during the trim counts its new interval from the trim's start; the loop's next round from
            // its end.
            self.autoTrimAnchor.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            let ran = self.background.run {
                do {
                    if try self.trimToLimits(), self.autoTrimFailures.exchange(0, ordering: .relaxed) > 0 {
                        kvLog.notice("DiskCache at \(self.path): background trim succeeded again")
                    }
                } catch {
                    let failures = self.autoTrimFailures.wrappingAdd(1, ordering: .relaxed).newValue
                    if Self.logsAutoTrimFailure(failures) {
                        kvLog.error("DiskCache at \(self.path): background trim failed (\(failures) in a row): \(error)")
                    } else {
                        kvLog.debug("DiskCache at \(self.path): background trim failed (\(failures) in a row): \(error)")
                    }
                }
            }
            self.autoTrimAnchor.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            if ran { self.scheduleAutoTrim(round: round) }
        }
    }

    /// Failed auto-trims in a row between two logged as errors: an hour's worth at the default interval.
    static let autoTrimFailureLogPeriod = 60

    /// Whether the `failures`-th failed auto-trim in a row is logged as an error (the first one, then every
    /// `autoTrimFailureLogPeriod`-th).
    static func logsAutoTrimFailure(_ failures: Int) -> Bool {
        failures == 1 || (failures > 1 && (failures - 1) % autoTrimFailureLogPeriod == 0)
    }

    /// Frees what instances that died beside this one left, then trims to cost, count, age and free-disk-space
    /// limits, unless another process is trimming this folder (advisory `trim.lock`): then the trim is skipped.
    ///
    /// The store lock is taken for one bounded step at a time (`KVStorage.trimStep`: one fold of the access
    /// log or one batch of `KVStorage.trimBatch` removals), so reads and writes are served between steps however much is
    /// trimmed.
    ///
    /// Returns whether it trimmed: `false` when it was skipped (closed, or `trim.lock` held elsewhere). The
    /// auto-trim counts only a trim that ran as a success: a skip that counted reset the failures in a row, so
    /// a trim failing beside another trimmer logged an error (and "succeeded again") after every skip
    /// (`DiskCacheAutoTrimReviewTests`).
    @discardableResult
    func trimToLimits() throws(KVCacheError) -> Bool {
        guard !background.isClosed else { return false }
        // First what instances that died beside this one left (slots, temporaries, journaled moves): a
        // long-running instance with no new opener beside it reaps them here (KVStorage+CleanShutdown.swift).
        try withStorage { (storage: KVStorage) -> Void in storage.reapDeadInstancesBesideThis() }
        // The numbers only: a copy of `Limits` would hold the `filename` closure, and when the user swaps it out
        // meanwhile, this task would free it, and with it maybe the last handle, whose `close()` waits for
        // this task (`DiskCacheCloseReviewTests`).
        let limits = self.limits.withLock {
            (costLimit: $0.costLimit, countLimit: $0.countLimit, ageLimit: $0.ageLimit,
             freeDiskSpaceLimit: $0.freeDiskSpaceLimit, freeDiskSpaceVolumeShare: $0.freeDiskSpaceVolumeShare)
        }
        guard let lock = try TrimLock(path: path + "/trim.lock") else { return false }
        defer { lock.release() }
        var target = TrimLimits(maxSize: limits.costLimit, maxCount: limits.countLimit,
                              accessedBefore: limits.ageLimit.isFinite ? Date(timeIntervalSinceNow: -limits.ageLimit) : nil)
        if limits.freeDiskSpaceLimit > 0, let volume = FreeDiskSpace.volume(atPath: path) {
            let floor = FreeDiskSpace.floor(limit: limits.freeDiskSpaceLimit, volumeSize: volume.size,
                                            share: limits.freeDiskSpaceVolumeShare)
            let needed = floor - volume.available
            if needed > 0 {
                let total = try withStorage { (storage) throws(KVCacheError) in try storage.itemsCost() }
                target.maxSize = min(target.maxSize, max(0, total - needed))
                kvLog.info("DiskCache at \(path): \(volume.available) bytes free on its volume of \(volume.size), under the floor of \(floor): trimming to \(target.maxSize) bytes")
            }
        }
        try trim(to: target)
        return true
    }

    /// Trims to `limits` step by step, holding the store lock for one step at a time (see `trimToLimits`),
    /// then schedules a trash sweep.
    func trim(to target: TrimLimits) throws(KVCacheError) {
        var limits = target
        var steps = 0
        // Not left set by a trim that fails or ends right after a checkpoint; the folds reads left meanwhile.
        defer { endAccessFlushDeferral(byTrim: true) }
        // The first step appends every pending access time (the trim orders by them): up to
        // `pendingAccessHardLimit` after a deferral, 40 ms and more in one hold of the lock at 1M entries. All
        // but the last batch go out here first, a batch per hold, reads served in between.
        for _ in 1..<(KVStorage.pendingAccessHardLimit / KVStorage.pendingAccessLimit) {
            let more = try withStorage { (storage) -> Bool in
                guard storage.pendingAccessTimes.count > KVStorage.pendingAccessLimit else { return false }
                storage.flushAccessTimes(atMost: KVStorage.pendingAccessLimit)
                return true
            }
            if !more { break }
        }
        // A long WAL not known to be all copied back (a stream of writes raced the background checkpoint,
        // which then never caught up) would not restart at the first step: the steps' commits would take it to
        // `inlineCheckpointFrames`, where a commit checkpoints under the store lock (40–90 ms at 1M entries in
        // `make bench`). Copied back first, as between two steps, the first step restarts it.
        if storage.withLock({ storage -> Bool in
            storage.trimDefersAccessFlush = storage.walHoldsUncopiedFrames
            return storage.trimDefersAccessFlush
        }) {
            checkpointOnThisThread()
        }
        while true {
            let (more, checkpointDue) = try withStorage { (storage) throws(KVCacheError) -> (Bool, Bool) in
                // Reads meanwhile kept their access times in memory; they are appended after this step,
                // whose commit (the first since the checkpoint) restarts the WAL.
                storage.trimDefersAccessFlush = false
                let more = try storage.trimStep(&limits)
                let due = storage.takeCheckpointDue()
                storage.trimDefersAccessFlush = due
                return (more, due)
            }
            if checkpointDue {
                // Between two steps, on this thread, with the lock released (reads go on) and no commit of
                // ours meanwhile (no step; reads keep their access times in memory): the checkpoint can copy
                // the whole WAL, and the next step restarts it. A checkpoint racing a stream of commits never
                // catches up, and the WAL would grow to the bound where a commit checkpoints itself.
                checkpointOnThisThread()
            }
            // The last handle went (`close()`): the rest is the next opener's to trim.
            guard more, !background.isClosed else { break }
            steps += 1
            trimStepHook.withLock { $0 }?(steps)
        }
        scheduleEmptyTrash()
    }
}

extension DiskCacheCore {
    /// Blocks until every trash sweep queued so far has run (tests).
    func waitForTrashSweep() { trashQueue.sync {} }

    /// Blocks until every checkpoint queued so far has run (tests).
    func waitForCheckpoint() { checkpointQueue.sync {} }
}
