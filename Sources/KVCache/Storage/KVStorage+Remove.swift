import Foundation

extension KVStorage {
    /// Removes the entry for `key`, if any: the row first, then its file goes to `trash/`.
    public func removeItem(forKey key: String) throws(KVCacheError) {
        try removeItems(forKeys: [key])
    }

    /// Removes the entries for `keys` in one transaction.
    public func removeItems(forKeys keys: [String]) throws(KVCacheError) {
        guard !keys.isEmpty else { return }
        try guarded { () throws(KVCacheError) in
            try withFileLock { () throws(KVCacheError) in try removeRows(forKeys: keys) }
        }
    }

    /// `removeItems(forKeys:)` under the file lock.
    private func removeRows(forKeys keys: [String]) throws(KVCacheError) {
        let files = try guarded { () throws(KVCacheError) -> [String] in
            try inWriteTransaction { () throws(KVCacheError) -> [String] in
                var files: [String] = []
                let delete = try database.prepare("DELETE FROM manifest WHERE key = ?1 RETURNING filename")
                for key in keys {
                    defer { delete.reset() }
                    delete.bind(key, at: 1)
                    while try delete.step() { if let name = delete.text(0) { files.append(name) } }
                }
                return files
            }
        }
        for key in keys { pendingAccessTimes.removeValue(forKey: ExactKey(key)) }
        for file in files { moveToTrash(file) }
    }

    /// Removes every entry whose value is larger than `size` bytes.
    public func removeItems(largerThan size: Int64) throws(KVCacheError) {
        try removeRows(where: "size > ?1", bind: size)
    }

    /// Removes every entry last accessed before `time`.
    public func removeItems(earlierThan time: Date) throws(KVCacheError) {
        try applyAccessTimes()
        try removeRows(where: "last_access_time < ?1", bind: time.manifestTime)
    }

    /// Removes least recently used entries until their total cost (`itemsCost()`: values, keys and extended
    /// data) is at most `maxSize` bytes.
    public func removeItems(toFitSize maxSize: Int64) throws(KVCacheError) {
        try applyAccessTimes()
        var total = try itemsCost()
        while total > maxSize {
            let removed = try removeOldest(limit: 32) { _, size in total - size > maxSize }
            if removed.count == 0 { break }
            total -= removed.size
        }
    }

    /// Removes least recently used entries until at most `maxCount` remain.
    public func removeItems(toFitCount maxCount: Int) throws(KVCacheError) {
        try applyAccessTimes()
        var count = try itemsCount()
        while count > max(0, maxCount) {
            let removed = try removeOldest(limit: 32) { removed, _ in count - removed > max(0, maxCount) }
            if removed.count == 0 { break }
            count -= removed.count
        }
    }

    /// Removes every entry, in batches, calling `progress(removedCount, totalCount)` after each batch
    /// (on the calling thread). Entries saved meanwhile through another instance may survive.
    public func removeAllItems(progress: ((Int, Int) -> Void)? = nil) throws(KVCacheError) {
        let (total, bound) = try beginRemoveAll()
        var removed = 0
        while true {
            let batch = try removeBatch(upToRowID: bound, limit: Self.removeAllBatchSize)
            if batch == 0 { break }
            removed += batch
            progress?(min(removed, total), max(total, removed))
        }
    }

    /// Entries `removeAllItems` removes per transaction (and `DiskCache` per lock hold).
    static let removeAllBatchSize = 64

    /// The start of a removal of every entry: drops pending access times and returns the entry count and
    /// the largest `rowid` (rows saved later get larger ones: the removal ends even while others write).
    func beginRemoveAll() throws(KVCacheError) -> (count: Int, maxRowID: Int64) {
        pendingAccessTimes.removeAll()
        let count = try itemsCount()
        let bound = try guarded { () throws(KVCacheError) -> Int64 in
            try reading { () throws(KVCacheError) -> Int64 in
                let select = try database.prepare("SELECT coalesce(max(rowid), 0) FROM manifest")
                defer { select.reset() }
                return try select.step() ? select.int64(0) : 0
            }
        }
        return (count, bound)
    }

    /// Removes up to `limit` entries whose `rowid` is at most `bound` in one transaction and trashes their
    /// files; returns how many went (0 when none is left).
    func removeBatch(upToRowID bound: Int64, limit: Int) throws(KVCacheError) -> Int {
        try guarded { () throws(KVCacheError) -> Int in try withFileLock { () throws(KVCacheError) -> Int in
            let files = try guarded { () throws(KVCacheError) -> [String?] in
                try inWriteTransaction { () throws(KVCacheError) -> [String?] in
                    let delete = try database.prepare(
                        "DELETE FROM manifest WHERE rowid IN (SELECT rowid FROM manifest WHERE rowid <= ?1 LIMIT ?2) RETURNING filename")
                    defer { delete.reset() }
                    delete.bind(bound, at: 1)
                    delete.bind(Int64(limit), at: 2)
                    var files: [String?] = []
                    while try delete.step() { files.append(delete.text(0)) }
                    return files
                }
            }
            for case let file? in files { moveToTrash(file) }
            return files.count
        } }
    }

    /// Removes up to `limit` least recently used entries in one transaction, one at a time while
    /// `shouldContinue(removedCount, removedCost)` holds (it is asked before each). Returns how many went and
    /// their total cost (`costExpression`: values, keys, extended data).
    /// Only entries last accessed before `accessedBefore` (manifest time) are candidates. After the first
    /// removal, stops once `duration` seconds have passed since the call began (a trim step's bound on how
    /// long it holds the store lock: `stepDuration`); the rest stay the oldest for the next call.
    func removeOldest(
        limit: Int, accessedBefore: Int64 = .max, within duration: Double = .infinity,
        while shouldContinue: (Int, Int64) -> Bool = { _, _ in true }
    ) throws(KVCacheError) -> (count: Int, size: Int64) {
        try guarded { () throws(KVCacheError) -> (count: Int, size: Int64) in
            try withFileLock { () throws(KVCacheError) -> (count: Int, size: Int64) in
                try _removeOldest(limit: limit, accessedBefore: accessedBefore, within: duration, while: shouldContinue)
            }
        }
    }

    /// `removeOldest` under the file lock.
    private func _removeOldest(
        limit: Int, accessedBefore: Int64, within duration: Double, while shouldContinue: (Int, Int64) -> Bool
    ) throws(KVCacheError) -> (count: Int, size: Int64) {
        let deadline = Self.stepDeadline(after: duration)
        let (count, size, files) = try guarded { () throws(KVCacheError) -> (Int, Int64, [String]) in
            try inWriteTransaction { () throws(KVCacheError) -> (Int, Int64, [String]) in
                // By rowid, not by key: a key read back from a damaged manifest may not be the bytes stored
                // (invalid UTF-8 comes back repaired), and such a row must still be removable.
                let select = try database.prepare(
                    "SELECT rowid, key, filename, \(Self.costExpression("manifest")) FROM manifest WHERE last_access_time < ?2 "
                        + "ORDER BY last_access_time ASC LIMIT ?1")
                var rows: [(rowid: Int64, key: String, filename: String?, cost: Int64)] = []
                do {
                    defer { select.reset() }
                    select.bind(Int64(limit), at: 1)
                    select.bind(accessedBefore, at: 2)
                    while try select.step() {
                        rows.append((select.int64(0), select.text(1) ?? "", select.text(2), select.int64(3)))
                    }
                }
                let delete = try database.prepare("DELETE FROM manifest WHERE rowid = ?1")
                var count = 0
                var size: Int64 = 0
                var files: [String] = []
                var attempted = 0
                for row in rows where shouldContinue(count, size) {
                    // At least one removal per call (progress), then only while time is left.
                    if attempted > 0, deadline != .max, DispatchTime.now().uptimeNanoseconds >= deadline { break }
                    defer { delete.reset() }
                    delete.bind(row.rowid, at: 1)
                    try delete.run()
                    attempted += 1
                    // The row was just selected in this transaction: a delete that finds nothing means the
                    // table itself is damaged (counting it would loop forever).
                    guard database.changes > 0 else { continue }
                    count += 1
                    size = size.addingReportingOverflow(row.cost).partialValue
                    if let name = row.filename { files.append(name) }
                }
                if attempted > 0 && count == 0 {
                    throw .sqlite(code: SQLiteCode.corrupt, message: "the oldest rows cannot be deleted by rowid",
                                  operation: "DELETE FROM manifest")
                }
                return (count, size, files)
            }
        }
        for file in files { moveToTrash(file) }
        return (count, size)
    }

    /// Removes every row matching `condition` (with `?1` bound to `value`) and trashes their files.
    private func removeRows(where condition: String, bind value: Int64) throws(KVCacheError) {
        try guarded { () throws(KVCacheError) in
            try withFileLock { () throws(KVCacheError) in try _removeRows(where: condition, bind: value) }
        }
    }

    /// `removeRows(where:bind:)` under the file lock.
    private func _removeRows(where condition: String, bind value: Int64) throws(KVCacheError) {
        let files = try guarded { () throws(KVCacheError) -> [String] in
            try inWriteTransaction { () throws(KVCacheError) -> [String] in
                let delete = try database.prepare("DELETE FROM manifest WHERE \(condition) RETURNING filename")
                defer { delete.reset() }
                delete.bind(value, at: 1)
                var files: [String] = []
                while try delete.step() { if let name = delete.text(0) { files.append(name) } }
                return files
            }
        }
        for file in files { moveToTrash(file) }
    }
}
