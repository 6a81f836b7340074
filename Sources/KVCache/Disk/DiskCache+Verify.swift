import Foundation

/// How much a `DiskCache` holds, split by where values live.
///
/// - Important: A value type; thread-safe.
public struct DiskCacheUsage: Sendable, Hashable {
    /// Entries in the manifest.
    public var entryCount = 0
    /// Entries whose value is inline in the SQLite manifest.
    public var inlineCount = 0
    /// Bytes of the inline values.
    public var inlineBytes: Int64 = 0
    /// Entries whose value is a file under `data/`.
    public var fileCount = 0
    /// Bytes of the file values (as recorded in the manifest).
    public var fileBytes: Int64 = 0
    /// The least recent access of any entry, `nil` when empty.
    public var oldestAccess: Date?
    /// The most recent access of any entry, `nil` when empty.
    public var newestAccess: Date?

    /// Bytes of every value.
    public var totalBytes: Int64 { inlineBytes + fileBytes }
}

/// What `DiskCache.verify()` found: SQLite's `PRAGMA quick_check` and the manifest compared with `data/`.
///
/// - Important: A value type; thread-safe.
public struct DiskCacheVerification: Sendable, Hashable {
    /// The lines of `PRAGMA quick_check`: `["ok"]` for a sound manifest.
    public var quickCheck: [String] = []
    /// The entry counts and sizes.
    public var usage = DiskCacheUsage()
    /// Keys whose value file is missing.
    public var missingFiles: [String] = []
    /// Keys whose value file's size differs from the manifest's.
    public var sizeMismatches: [String] = []
    /// Files in `data/` that no entry references: harmless leftovers of a crash (or another process's write
    /// in flight), removed by the next open that holds the folder alone.
    public var unreferencedFiles: [String] = []

    /// Whether the manifest is sound and every entry's file is present with its size.
    public var isHealthy: Bool { quickCheck == ["ok"] && missingFiles.isEmpty && sizeMismatches.isEmpty }
}

extension DiskCache {
    /// Counts entries and bytes, inline and in files. One SQL aggregate; does not read values.
    ///
    /// - Important: Touches the manifest on the calling thread.
    public func usage() throws(KVCacheError) -> DiskCacheUsage {
        try core.withFreshRead { (storage) throws(KVCacheError) -> DiskCacheUsage in
            let select = try storage.database.prepare(
                "SELECT filename IS NULL, count(*), total(size), min(last_access_time), max(last_access_time) FROM manifest GROUP BY filename IS NULL")
            defer { select.reset() }
            var usage = DiskCacheUsage()
            while try select.step() {
                let count = Int(select.int64(1)), bytes = select.int64(2)
                if select.int64(0) != 0 { (usage.inlineCount, usage.inlineBytes) = (count, bytes) } else {
                    (usage.fileCount, usage.fileBytes) = (count, bytes)
                }
                let oldest = Date(manifestTime: select.int64(3)), newest = Date(manifestTime: select.int64(4))
                usage.oldestAccess = min(usage.oldestAccess ?? oldest, oldest)
                usage.newestAccess = max(usage.newestAccess ?? newest, newest)
            }
            usage.entryCount = usage.inlineCount + usage.fileCount
            return usage
        }
    }

    /// Every key, least recently used first. Reads the manifest only (no values).
    ///
    /// - Important: Touches the manifest on the calling thread; O(n) in entries.
    public func allKeys() throws(KVCacheError) -> [String] {
        try core.withFreshRead { (storage) throws(KVCacheError) -> [String] in
            let select = try storage.database.prepare("SELECT key FROM manifest ORDER BY last_access_time")
            defer { select.reset() }
            var keys: [String] = []
            while try select.step() { if let key = select.text(0) { keys.append(key) } }
            return keys
        }
    }

    /// Checks the store without repairing it: runs SQLite's `PRAGMA quick_check` on the manifest, checks
    /// that every file entry's file exists with the recorded size, and lists files no entry references.
    ///
    /// ```swift
    /// let report = try DiskCache(path: path).verify()
    /// if !report.isHealthy { print(report.missingFiles, report.quickCheck) }
    /// ```
    ///
    /// - Important: Holds the store's lock for the whole check (a stat per file entry, a directory listing);
    ///   call it from a maintenance thread, not a latency-sensitive one. Values are not read: decode them
    ///   yourself to check their content.
    public func verify() throws(KVCacheError) -> DiskCacheVerification {
        var report = DiskCacheVerification()
        report.usage = try usage()
        try core.withFreshRead { (storage) throws(KVCacheError) in
            report.quickCheck = try storage.database.textRows("PRAGMA quick_check")
            let select = try storage.database.prepare("SELECT key, filename, size FROM manifest WHERE filename IS NOT NULL")
            defer { select.reset() }
            var referenced = Set<ExactKey<String>>()
            while try select.step() {
                guard let key = select.text(0), let filename = select.text(1) else { continue }
                referenced.insert(ExactKey(filename))
                switch try storage.io.fileSize(storage.dataPath + "/" + filename) {
                case nil: report.missingFiles.append(key)
                case let size? where size != select.int64(2): report.sizeMismatches.append(key)
                default: break
                }
            }
            report.unreferencedFiles = try storage.io.contentsOfDirectory(storage.dataPath)
                .filter { !referenced.contains(ExactKey($0)) }.sorted()
        }
        return report
    }
}

extension DiskCacheCore {
    /// Runs `body`, a read of the manifest, holding the storage lock, after writing pending access times,
    /// in a read snapshot begun for it: it sees every commit (of any process) that finished before the
    /// call, as the single-key reads do (see "Reads" in KVStorage.swift). Corruption goes through the
    /// store's recovery protocol (`guarded`).
    func withFreshRead<T>(_ body: (KVStorage) throws(KVCacheError) -> T) throws(KVCacheError) -> sending T {
        try withStorage { (storage) throws(KVCacheError) -> T in
            // Access times folded into the manifest first (see KVStorage+AccessTime), so LRU order is current.
            try storage.applyAccessTimes()
            return try storage.guarded { () throws(KVCacheError) -> T in
                storage.endReadSnapshot()
                return try storage.reading { () throws(KVCacheError) -> T in try body(storage) }
            }
        }
    }
}
