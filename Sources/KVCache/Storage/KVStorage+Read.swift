import Foundation

extension KVStorage {
    /// The item for `key` with its value, or `nil`. Counts as an access (for LRU trimming).
    ///
    /// A row whose file is missing or has the wrong size (another process replaced the value meanwhile) is
    /// read again in a fresh snapshot; a row that still names a missing or wrong-sized file is removed
    /// (logged as a corrupt entry) and reported as a miss.
    public func item(forKey key: String) throws(KVCacheError) -> KVStorageItem? {
        try readItem(forKey: key, valueOnly: false)
    }

    /// `item(forKey:)`; with `valueOnly`, the item's times and extended data are not read (`itemValue`).
    private func readItem(forKey key: String, valueOnly: Bool) throws(KVCacheError) -> KVStorageItem? {
        try guarded { () throws(KVCacheError) -> KVStorageItem? in
            for attempt in 0..<3 {
                guard var item = try reading({ () throws(KVCacheError) in
                    try row(forKey: key, includeValue: true, valueOnly: valueOnly)
                }) else {
                    return nil
                }
                guard let filename = item.filename else {
                    recordAccess(&item)
                    return item
                }
                // A damaged manifest may name a path outside data/: a corrupt entry, never read.
                let isSafe = Self.isSafeFilename(filename)
                let data = isSafe ? try io.read(dataPath + "/" + filename, expectedSize: item.size) : nil
                if let data, Int64(data.count) == item.size {
                    item.value = data
                    recordAccess(&item)
                    return item
                }
                if attempt == 0 && isSafe {
                    endReadSnapshot()
                    continue
                }
                if try removeRowIfStill(key: key, filename: filename) {
                    let reason = !isSafe ? "bad file name \(filename)" : data == nil ? "file \(filename) missing" : "file \(filename) has \(data?.count ?? 0) bytes, not \(item.size)"
                    kvLog.error("KVStorage at \(path): \(KVCacheError.corruptEntry(key: key, reason: reason))")
                    return nil
                }
                // The row moved on meanwhile (a writer replaced or removed the value twice while we looked):
                // not damage; look once more.
            }
            return nil
        }
    }

    /// The value for `key`, or `nil`. Counts as an access.
    ///
    /// An inline value (the common case) takes one lookup and builds no item; a value in a file goes
    /// through `item(forKey:)`'s checks.
    public func itemValue(forKey key: String) throws(KVCacheError) -> Data? {
        try guarded { () throws(KVCacheError) -> Data? in
            let found = try reading { () throws(KVCacheError) -> InlineLookup in try inlineValue(forKey: key) }
            switch found {
            case .missing:
                return nil
            case .inline(let value):
                recordAccess(ofKey: key)
                return value
            case .inFile:
                return try readItem(forKey: key, valueOnly: true)?.value
            }
        }
    }

    /// What the manifest holds for a key, as `itemValue` needs it.
    enum InlineLookup {
        case missing
        case inline(Data)
        case inFile
    }

    /// The inline value for `key`, or that there is none or that the value is in a file.
    private func inlineValue(forKey key: String) throws(KVCacheError) -> InlineLookup {
        let select = try database.prepare(.selectValue)
        return try select.withBorrowedText(key, at: 1) { () throws(KVCacheError) -> InlineLookup in
            guard try select.step() else { return .missing }
            guard select.isNull(0) else { return .inFile }
            return .inline(select.data(2) ?? Data())
        }
    }

    /// The item for `key` without its value (`value` is empty), or `nil`. Does not read the value file and
    /// does not count as an access.
    public func itemInfo(forKey key: String) throws(KVCacheError) -> KVStorageItem? {
        try guarded { () throws(KVCacheError) -> KVStorageItem? in
            try reading { () throws(KVCacheError) in try row(forKey: key, includeValue: false) }
        }
    }

    /// The items for several keys (missing keys are skipped). Each counts as an access.
    public func items(forKeys keys: [String]) throws(KVCacheError) -> [KVStorageItem] {
        var found: [KVStorageItem] = []
        for key in keys { if let item = try item(forKey: key) { found.append(item) } }
        return found
    }

    /// Whether an entry exists for `key`. Does not read the value and does not count as an access.
    public func containsItem(forKey key: String) throws(KVCacheError) -> Bool {
        try guarded { () throws(KVCacheError) -> Bool in
            try reading { () throws(KVCacheError) -> Bool in
                let select = try database.prepare(.containsKey)
                return try select.withBorrowedText(key, at: 1) { () throws(KVCacheError) -> Bool in try select.step() }
            }
        }
    }

    /// The number of entries. O(1): kept in the `totals` row by triggers (see KVStorage+Schema.swift).
    public func itemsCount() throws(KVCacheError) -> Int {
        try guarded { () throws(KVCacheError) -> Int in
            try reading { () throws(KVCacheError) -> Int in try totals().count }
        }
    }

    /// The total size of the values in bytes. O(1): kept in the `totals` row by triggers.
    public func itemsSize() throws(KVCacheError) -> Int64 {
        try guarded { () throws(KVCacheError) -> Int64 in
            try reading { () throws(KVCacheError) -> Int64 in try totals().size }
        }
    }

    /// The total cost of the entries in bytes: what cost limits count. Each entry costs its value (a value file
    /// rounded up to whole 4 KiB blocks), its key three times (the row, the key index, an access-log row), its
    /// extended data and 128 bytes of row overhead. O(1): kept in the `totals` row by triggers.
    public func itemsCost() throws(KVCacheError) -> Int64 {
        try guarded { () throws(KVCacheError) -> Int64 in
            try reading { () throws(KVCacheError) -> Int64 in try totals().cost }
        }
    }

    /// The row for `key`; the inline value when asked (file values are read by the caller). The access time
    /// is the manifest's; `recordAccess` puts a pending one in its place. With `valueOnly`, only the columns
    /// a value read needs are decoded: the times are 1970 and the extended data `nil`.
    func row(forKey key: String, includeValue: Bool, valueOnly: Bool = false) throws(KVCacheError) -> KVStorageItem? {
        let select = try database.prepare(valueOnly ? .selectValue : includeValue ? .selectItem : .selectInfo)
        return try select.withBorrowedText(key, at: 1) { () throws(KVCacheError) -> KVStorageItem? in
            guard try select.step() else { return nil }
            let filename = select.text(0)
            if valueOnly {
                let epoch = Date(timeIntervalSince1970: 0)
                return KVStorageItem(key: key, value: filename == nil ? (select.data(2) ?? Data()) : Data(), filename: filename,
                                     size: select.int64(1), modificationTime: epoch, lastAccessTime: epoch, extendedData: nil)
            }
            return KVStorageItem(
                key: key,
                value: includeValue && filename == nil ? (select.data(5) ?? Data()) : Data(),
                filename: filename,
                size: select.int64(1),
                modificationTime: Date(manifestTime: select.int64(2)),
                lastAccessTime: Date(manifestTime: includeValue ? select.int64(3) : pendingAccessTimes[ExactKey(key)] ?? select.int64(3)),
                extendedData: select.data(4)
            )
        }
    }

    /// Deletes the row for `key` if it still points at `filename` and that file is still missing or of the
    /// wrong size; returns whether it did. Both are checked inside the write transaction, where no writer
    /// can move files: a value replaced twice meanwhile may use `filename` again, with a sound new file.
    @discardableResult
    func removeRowIfStill(key: String, filename: String) throws(KVCacheError) -> Bool {
        try withFileLock { () throws(KVCacheError) -> Bool in try _removeRowIfStill(key: key, filename: filename) }
    }

    /// `removeRowIfStill` under the file lock.
    private func _removeRowIfStill(key: String, filename: String) throws(KVCacheError) -> Bool {
        let removed = try inWriteTransaction { () throws(KVCacheError) -> Bool in
            let select = try database.prepare("SELECT size FROM manifest WHERE key = ?1 AND filename = ?2")
            select.bind(key, at: 1)
            select.bind(filename, at: 2)
            let found: Bool
            do throws(KVCacheError) {
                found = try select.step()
            } catch {
                select.reset()
                throw error
            }
            let size = select.int64(0)
            select.reset()
            guard found else { return false }
            if Self.isSafeFilename(filename), try io.fileSize(dataPath + "/" + filename) == size { return false }
            let delete = try database.prepare("DELETE FROM manifest WHERE key = ?1 AND filename = ?2")
            defer { delete.reset() }
            delete.bind(key, at: 1)
            delete.bind(filename, at: 2)
            try delete.run()
            return database.changes > 0
        }
        if removed { moveToTrash(filename) }
        return removed
    }
}
