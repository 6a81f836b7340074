import Foundation

/// The limits one trim enforces (`DiskCache`'s, with the free-disk-space limit already turned into a size).
struct TrimLimits: Sendable {
    /// The largest total cost (values, keys, extended data: `KVStorage.costExpression`) left after the trim.
    var maxSize = Int64.max
    var maxCount = Int.max
    /// Entries last accessed before this are removed; `nil` for no age limit.
    var accessedBefore: Date?
    /// The end of `access_log` when the trim began (set by its first step): the trim folds the log up to
    /// there, so it orders entries by their accesses up to its start. Reads made while it runs are folded by
    /// the next trim; folding them too would let a busy reader postpone the removals indefinitely.
    var foldThrough: Int64?
    /// The last rowid this trim's folds took off `access_log`: a row at or below it was appended after they
    /// emptied the log (which then numbers from 1 again), a read made while the trim runs, and is not folded.
    var foldedThrough: Int64?
}

extension KVStorage {
    /// Rows removed per trim step at most: one short write transaction (a few milliseconds with 2 KB inline
    /// values on a fast machine), and fewer when `stepDuration` runs out first.
    static let trimBatch = 64
    /// The default `stepDuration`: 5 ms. Each removal from a 1M-entry store rewrites cold B-tree pages
    /// (200–450 µs each on a slow 2-core machine, where 64 of them held the lock for 15–30 ms); the commit,
    /// the fold batches and scheduling come on top, within the 50 ms a reader may wait.
    static let defaultStepDuration = 0.005

    /// The uptime (`DispatchTime`, nanoseconds) at which a step that begins now and may last `duration` seconds
    /// (`stepDuration`) stops after its first row: `.max`, no bound, for NaN, +infinity and any duration past
    /// about 292 years; now (the first row only) for 0 and every negative duration, -infinity included.
    /// (`UInt64(duration * 1e9)` trapped past `UInt64.max`, e.g. 1e11 s, and -infinity, not being finite, meant
    /// "no bound" where -1 meant "no time": `KVCacheFoldTimeBoundReviewTests`.)
    static func stepDeadline(after duration: Double) -> UInt64 {
        if duration.isNaN || duration == .infinity { return .max }
        let now = DispatchTime.now().uptimeNanoseconds
        guard duration > 0 else { return now }
        let nanoseconds = duration * 1e9
        guard nanoseconds < Double(UInt64.max / 2), now < UInt64.max / 2 else { return .max }
        return now + UInt64(nanoseconds)
    }

    /// Does one bounded step of a trim to `limits` and returns whether more remain: folds a batch of the
    /// access log as it was when the trim began (the first step appends the pending access times), else
    /// removes up to `trimBatch` least recently used entries beyond the cost or count limit, else up to
    /// `trimBatch` entries older than the age limit, else gives up to `vacuumBatchPages` free pages of the
    /// manifest back to the file system. `DiskCache` calls it in a loop, taking its lock for one
    /// step at a time, so reads and writes are served between steps.
    func trimStep(_ limits: inout TrimLimits) throws(KVCacheError) -> Bool {
        if limits.foldThrough == nil {
            flushAccessTimes()
            limits.foldThrough = try guarded { () throws(KVCacheError) in try reading { () throws(KVCacheError) in try accessLogEnd() } }
        }
        if let folded = try foldAccessLog(through: limits.foldThrough ?? 0, above: limits.foldedThrough) {
            limits.foldedThrough = folded.upperBound
            return true
        }
        // By cost: values, keys and extended data (`costExpression`), not by the values' size alone.
        let (count, _, cost) = try guarded { () throws(KVCacheError) in try reading { () throws(KVCacheError) in try totals() } }
        let maxCount = max(0, limits.maxCount), maxSize = max(0, limits.maxSize)
        if count > maxCount || cost > maxSize {
            let removed = try removeOldest(limit: Self.trimBatch, within: stepDuration) { removedCount, removedCost in
                count - removedCount > maxCount || cost - removedCost > maxSize
            }
            return removed.count > 0
        }
        if let cutoff = limits.accessedBefore,
           try removeOldest(limit: Self.trimBatch, accessedBefore: cutoff.manifestTime, within: stepDuration).count > 0 {
            return true
        }
        // Last, the pages the removals freed go back to the file system (KVStorage+Vacuum.swift).
        return try vacuumStep()
    }
}
