import Foundation

// Access times (for LRU trimming) in three tiers, so a read never rewrites a value row:
//   1. `pendingAccessTimes`, in memory: one dictionary update per read;
//   2. `access_log(key, time)`, an append-only table: pending times are appended in one transaction when
//      1,024 distinct keys are pending, at close and before anything that orders by access time. Appending
//      touches the last page or two of one narrow B-tree whatever the store's size, where an UPDATE of
//      `manifest.last_access_time` rewrote the key's row (inline value included) and moved it in the
//      access-time index: one random page per read, written to the WAL and checkpointed back (measured with
//      2 KB values at 100k entries: 10.6 µs of CPU per read for that UPDATE, 0.7 µs for the append);
//   3. `manifest.last_access_time`: the log is folded into it (newest time per key wins) before every LRU
//      trim or age trim, by `usage()`/`allKeys()`, and a batch at a time once the log outgrows
//      `accessLogCap` (so a store nobody trims keeps a log at most about as long as it has entries).
//      `DiskCache` folds those batches on a background queue, each in its own hold of the store lock
//      (`defersLogFolds`): folded inside the read that flushed, up to 4 × 256 row rewrites held every other
//      reader for tens of milliseconds (the worst read during a trim of a 100k-entry store). While the log
//      is past its cap ("full", `accessLogFull`) reads append nothing: they keep their times in memory, up
//      to `pendingAccessHardLimit` distinct keys, and past that a newly read key's time is not recorded (it
//      keeps its older one, so it may be evicted a little early) until the folds bring the log back under
//      its cap. So the log stays within its cap plus `pendingAccessHardLimit` rows and memory within that
//      many keys, however far the folds fall behind (their queue starved of CPU while readers run), and no
//      read folds or commits more because of it (`KVCacheAccessLogGrowthReviewTests`).
// A crash loses at most the pending tier; never a value.

/// An `access_log` key as SQLite compares it in a fold: its exact bytes (a key read back as a `String` from a
/// damaged row may come back repaired) and whether they are a BLOB (never equal to a TEXT with the same bytes:
/// a BLOB row written from outside must not take a text key's time). Hashed over all its bytes: `Data` hashes
/// only its first 80, so a batch of long keys sharing a prefix fell into one hash chain, and grouping 256 keys
/// of 100 KB held the store lock for most of a second (`KVCacheFoldKeyTypeReviewTests`,
/// `KVCacheFoldTimeBoundReviewTests`).
struct LogKey: Hashable {
    let isBlob: Bool
    let bytes: Data

    func hash(into hasher: inout Hasher) {
        hasher.combine(isBlob)
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension KVStorage {
    /// Distinct keys pending before they are appended to `access_log`.
    static let pendingAccessLimit = 1_024
    /// Distinct keys pending before they are appended even while `defersAccessFlush` is set.
    static let pendingAccessHardLimit = 4_096
    /// Log rows folded into the manifest per transaction at most, fewer when `stepDuration` runs out first.
    /// Each folded key rewrites its row (2 KB inline value included) and moves it in the access-time index:
    /// 3–8 pages per row written to the WAL at the commit, after the step's clock has stopped. With 256 rows a
    /// fold's commit wrote 7 MB and, with the kernel throttling writers behind the checkpoints, held the store
    /// lock 47–61 ms at 1M entries (lock trace of `make bench`); 64, the trim's batch, keeps a commit near 2 MB.
    static let accessFoldBatch: Int64 = 64

    /// Notes a read of `item`; access times reach the manifest in batches (see the top of this file). The
    /// item keeps the access time before this one (a pending one if any, else the manifest's, which does not
    /// yet include reads still in `access_log`): one hash of the key.
    func recordAccess(_ item: inout KVStorageItem) {
        if let previous = recordAccess(ofKey: item.key) {
            item.lastAccessTime = Date(manifestTime: previous)
        }
    }

    /// Notes a read of `key` (see `recordAccess(_:)`); returns the key's pending access time before this one,
    /// if it had one.
    @discardableResult
    func recordAccess(ofKey rawKey: String) -> Int64? {
        let key = ExactKey(rawKey)
        if accessLogFull, pendingAccessTimes.count >= Self.pendingAccessHardLimit, pendingAccessTimes[key] == nil,
           !recheckAccessLogFull() {
            accessTimesDropped += 1
            return nil
        }
        let previous = pendingAccessTimes.updateValue(nextStamp(), forKey: key)
        if pendingAccessTimes.count >= Self.pendingAccessLimit, !accessLogFull,
           !defersAccessFlush || pendingAccessTimes.count >= Self.pendingAccessHardLimit,
           !(defersLogFolds && accessLogIsPastCap()) {
            flushAccessTimes(atMost: Self.pendingAccessLimit)
        }
        return previous
    }

    /// Whether `access_log` is past its cap (two B-tree probes and the totals row, once per flush); if so
    /// marks it full and owes the folds that bring it back, for the owner to schedule. A failure to read
    /// the length counts as "not past": the flush goes ahead, as before the log had a bound.
    private func accessLogIsPastCap() -> Bool {
        do {
            let over = try accessLogLength() - accessLogCap()
            guard over > 0 else { return false }
            owedLogFolds = max(owedLogFolds, Int((over + Self.accessFoldBatch - 1) / Self.accessFoldBatch))
            accessLogFull = true
            return true
        } catch {
            kvLog.warning("KVStorage at \(path): access log length unknown: \(error)")
            return false
        }
    }

    /// Whether `access_log` is no longer full, rechecked on the first dropped read and every 256th after
    /// (a fold that failed, or a cap that shrank with the entry count, must not leave reads unrecorded for
    /// good); while it still is, makes sure a fold is owed, for the owner to schedule.
    private func recheckAccessLogFull() -> Bool {
        guard accessTimesDropped % 256 == 0 else { return false }
        guard accessLogIsPastCap() else {
            accessLogFull = false
            return true
        }
        // Folds wait while the WAL is long, and with the log full nothing of ours commits: a checkpoint
        // (whose result may show the WAL copied back) is the way out.
        if walIsLong { checkpointWanted = true }
        return false
    }

    /// Appends pending access times to `access_log` in one transaction, at most `limit` of them (all by
    /// default), and folds one batch of the log into the manifest when the log has outgrown `accessLogCap`.
    /// A failure is logged and the batch dropped: access times only steer eviction order.
    ///
    /// A read appends at most `pendingAccessLimit` keys (the rest go out with the next reads, a batch each):
    /// after a deferral (`defersAccessFlush`) up to `pendingAccessHardLimit` keys are pending, and appended at
    /// once (3,164 keys were seen in a trim of a 1M-entry store in `make bench`) they held the store lock for
    /// 40 ms and more. (Most of that was the log's length, which scanned the log until it read each end of
    /// the rowid range with a probe of its own; 1,024 appends take about 1.5 ms on a slow 2-core machine.)
    func flushAccessTimes(atMost limit: Int = .max) {
        guard !pendingAccessTimes.isEmpty, database.isOpen else { return }
        let pending: [ExactKey<String>: Int64]
        if pendingAccessTimes.count <= limit {
            pending = pendingAccessTimes
            pendingAccessTimes.removeAll(keepingCapacity: true)
        } else {
            // Split in one pass into two new dictionaries. Removing the batch's keys one by one from the
            // pending dictionary instead cost 1.4–7.7 ms of CPU under the store lock for 1,024 of 2,000–4,000
            // keys (lock trace of `make bench`): each removal from an open-addressed table shifts the rest of its
            // probe run back, hashing every key it moves, and removing in bucket order empties run after run.
            var batch: [ExactKey<String>: Int64] = [:], rest: [ExactKey<String>: Int64] = [:]
            batch.reserveCapacity(limit)
            rest.reserveCapacity(pendingAccessTimes.count - limit)
            for (key, time) in pendingAccessTimes {
                if batch.count < limit { batch[key] = time } else { rest[key] = time }
            }
            pendingAccessTimes = rest
            pending = batch
        }
        do {
            let logRows = try guarded { () throws(KVCacheError) -> Int64 in
                try inWriteTransaction { () throws(KVCacheError) -> Int64 in
                    let append = try database.prepare("INSERT INTO access_log (key, time) VALUES (?1, ?2)")
                    for (key, time) in pending {
                        defer { append.reset() }
                        append.bind(key.base, at: 1)
                        append.bind(time, at: 2)
                        try append.run()
                    }
                    return try accessLogLength()
                }
            }
            accessLogAppends += 1
            // Up to `pendingAccessLimit` (1,024) rows, what one flush appends at most: the log stays near its cap.
            var over = logRows - (try accessLogCap())
            if defersLogFolds {
                // The owner folds them, a batch per lock hold (`DiskCacheCore.scheduleLogFolds`): all the log
                // is over its cap by, as no hold grows with it (a reader that no longer folds appends faster).
                if over > 0 {
                    owedLogFolds = max(owedLogFolds, Int((over + Self.accessFoldBatch - 1) / Self.accessFoldBatch))
                    accessLogFull = true
                }
                return
            }
            // Counted in rows folded, not folds: a fold may stop after one row (`stepDuration`), and 4 short
            // folds per 1,024 rows appended let the log grow without bound (`KVCacheFoldFlushBoundReviewTests`).
            // Each fold still commits on its own.
            var folded: Int64 = 0
            while over > 0 && folded < Int64(Self.pendingAccessLimit), let range = try foldAccessLog() {
                let rows = range.upperBound - range.lowerBound + 1
                over -= rows
                folded += rows
            }
        } catch {
            kvLog.warning("KVStorage at \(path): access times not recorded: \(error)")
        }
    }

    /// The log length above which a flush also folds a batch: the larger of 65,536 rows and the entry count.
    func accessLogCap() throws(KVCacheError) -> Int64 {
        max(65_536, Int64(try totals().count))
    }

    /// Rows in `access_log` (from its rowid range: two B-tree probes). Each bound is a subquery of its own:
    /// SQLite finds a lone `min()` or `max()` at the end of the B-tree, but a query with both scans the whole
    /// table (the log, up to the entry count in rows, once per flush: `KVStorageQueryPlanTests`).
    func accessLogLength() throws(KVCacheError) -> Int64 {
        let select = try database.prepare("""
            SELECT coalesce((SELECT max(rowid) FROM access_log) - (SELECT min(rowid) FROM access_log) + 1, 0)
            """)
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    /// Folds up to `accessFoldBatch` of the oldest `access_log` rows (those with a rowid up to `through`) into
    /// `manifest.last_access_time` (the newest time per key wins; a time older than the row's, e.g. from before
    /// the key was saved again, is ignored) and deletes them, in one transaction. After the first row, stops
    /// once `stepDuration` has passed (each folded key rewrites its row: 256 of them held the store lock 14–20 ms
    /// at 100k entries on a slow 2-core machine); the rest stay the oldest for the next call. Returns whether
    /// it found rows to fold (`false`: none up to `through`).
    func foldAccessLogBatch(through limit: Int64 = .max) throws(KVCacheError) -> Bool {
        try foldAccessLog(through: limit) != nil
    }

    /// `foldAccessLogBatch`, returning the rowids it took off the log: from the oldest row through the last
    /// one folded (the log's length, a rowid range, is that much shorter), `nil` when there was nothing up to
    /// `through`, or when the oldest row is at or below `floor`: a trim passes the last rowid its folds took
    /// off, as rows below it were appended after its folds emptied the log (`access_log` has no AUTOINCREMENT:
    /// an empty log numbers from 1 again), reads made while it runs (`KVCacheFoldThroughReuseReviewTests`).
    /// A flush counts what its folds actually took off, as a fold may stop after one row.
    func foldAccessLog(through limit: Int64 = .max, above floor: Int64? = nil) throws(KVCacheError) -> ClosedRange<Int64>? {
        let deadline = Self.stepDeadline(after: stepDuration)
        return try guarded { () throws(KVCacheError) -> ClosedRange<Int64>? in
            try inWriteTransaction { () throws(KVCacheError) -> ClosedRange<Int64>? in
                // Two subqueries, each one probe (see `accessLogLength`).
                let first = try database.prepare("""
                    SELECT (SELECT min(rowid) FROM access_log), (SELECT max(rowid) FROM access_log)
                    """)
                guard try first.step(), !first.isNull(0) else {
                    first.reset()
                    accessLogFull = false
                    return nil
                }
                let (low, high) = (first.int64(0), min(limit, first.int64(1)))
                first.reset()
                guard low <= high else { return nil }
                if let floor, low <= floor { return nil }
                let cut = min(high, low + Self.accessFoldBatch - 1)
                // The batch in log order, and each key's newest time in it (the key as SQLite compares it, see
                // `LogKey`). Read within the step too: after the first row, only the rows read in time are folded
                // (reading and grouping 256 keys of 100 KB took far longer than a step).
                let select = try database.prepare(
                    "SELECT rowid, key, time, typeof(key) = 'blob' FROM access_log WHERE rowid BETWEEN ?1 AND ?2")
                var rows: [(rowid: Int64, key: LogKey)] = []
                var newest: [LogKey: Int64] = [:]
                do {
                    defer { select.reset() }
                    select.bind(low, at: 1)
                    select.bind(cut, at: 2)
                    while try select.step() {
                        let key = LogKey(isBlob: select.int64(3) != 0, bytes: select.data(1) ?? Data())
                        rows.append((select.int64(0), key))
                        newest[key] = max(newest[key] ?? .min, select.int64(2))
                        if deadline != .max, DispatchTime.now().uptimeNanoseconds >= deadline { break }
                    }
                }
                // Each key once, at its first row, with its newest time; by the row's rowid, so the key
                // compared is the log's own bytes.
                let update = try database.prepare("""
                    UPDATE manifest SET last_access_time = ?2
                    WHERE key = (SELECT key FROM access_log WHERE rowid = ?1) AND last_access_time < ?2
                    """)
                // The oldest row (`low`) is always read: nothing was folded only if the log changed under us.
                guard !rows.isEmpty else { return nil }
                var folded = low - 1
                for row in rows {
                    if folded >= low, deadline != .max, DispatchTime.now().uptimeNanoseconds >= deadline { break }
                    if let time = newest.removeValue(forKey: row.key) {
                        defer { update.reset() }
                        update.bind(row.rowid, at: 1)
                        update.bind(time, at: 2)
                        try update.run()
                    }
                    folded = row.rowid
                }
                let delete = try database.prepare("DELETE FROM access_log WHERE rowid <= ?1")
                do {
                    defer { delete.reset() }
                    delete.bind(folded, at: 1)
                    try delete.run()
                }
                accessLogFolds += 1
                // Full until the log is back under its cap; until then the batches left are owed.
                if accessLogFull, !accessLogIsPastCap() { accessLogFull = false }
                return low...folded
            }
        }
    }

    /// The last rowid of `access_log` (0 when empty): where a trim that begins now stops folding.
    func accessLogEnd() throws(KVCacheError) -> Int64 {
        let select = try database.prepare("SELECT coalesce(max(rowid), 0) FROM access_log")
        defer { select.reset() }
        return try select.step() ? select.int64(0) : 0
    }

    /// Makes `manifest.last_access_time` current: appends the pending times and folds the whole log. Called
    /// before LRU and age trims and by the O(n) inspection calls (`usage()`, `allKeys()`); `DiskCache`'s trim
    /// loop folds batch by batch instead, releasing its lock in between.
    ///
    /// - Throws: `KVCacheError` when a fold fails (the log keeps its rows; the caller's trim does not run on
    ///   a stale order).
    func applyAccessTimes() throws(KVCacheError) {
        flushAccessTimes()
        while try foldAccessLogBatch() {}
    }
}
