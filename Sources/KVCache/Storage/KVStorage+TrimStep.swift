import Foundation

/// The limits one trim enforces (`DiskCache`'s, with the free-disk-space limit already turned into a size).
struct TrimLimits: Sendable {
    var maxSize = Int64.max
    var maxCount = Int.max
    /// Entries last accessed before this are removed; `nil` for no age limit.
    var accessedBefore: Date?
}

extension KVStorage {
    /// Rows removed per trim step: one short write transaction (a few milliseconds with 2 KB inline values).
    static let trimBatch = 64

    /// Does one bounded step of a trim to `limits` and returns whether more remain: folds a batch of the
    /// access log (after appending the pending access times, so reads served between steps count), else
    /// removes up to `trimBatch` least recently used entries beyond the size or count limit, else up to
    /// `trimBatch` entries older than the age limit. `DiskCache` calls it in a loop, taking its lock for one
    /// step at a time, so reads and writes are served between steps.
    func trimStep(_ limits: TrimLimits) throws(KVCacheError) -> Bool {
        flushAccessTimes()
        if try accessLogLength() > 0 {
            _ = try foldAccessLogBatch()
            return true
        }
        let (count, size) = try guarded { () throws(KVCacheError) in try reading { () throws(KVCacheError) in try totals() } }
        let maxCount = max(0, limits.maxCount), maxSize = max(0, limits.maxSize)
        if count > maxCount || size > maxSize {
            let removed = try removeOldest(limit: Self.trimBatch) { removedCount, removedSize in
                count - removedCount > maxCount || size - removedSize > maxSize
            }
            return removed.count > 0
        }
        if let cutoff = limits.accessedBefore {
            return try removeOldest(limit: Self.trimBatch, accessedBefore: cutoff.manifestTime).count > 0
        }
        return false
    }
}
