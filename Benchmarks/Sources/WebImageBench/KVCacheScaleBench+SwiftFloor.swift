import CBenchHarness
import Foundation

/// The floors of a read from Swift, measured beside SQLite's from C in "KVCache at scale": what any Swift
/// read over the same SQLite pays before it does anything of its own.
///
/// - `returningData`: the lookup `DiskCache.object(forKey:)` makes (same SQL, same pragmas, a snapshot
///   renewed every 1,000 reads), with the value returned as a `Data` and released by the caller. `Data` costs
///   an object and a buffer (two allocations and two frees) where the C floor makes one `malloc` and `free`.
/// - `withAccessTime`: the same, plus what an exact LRU adds: the wall clock read and the time put in a
///   dictionary by the key's bytes, as `KVStorage` keeps its pending access times (no lock, no flush, no
///   snapshot check, no recovery). By the row's `rowid` (an integer hash) it measured 0.01–0.02× of the C
///   floor less, but a replaced row lost the key's pending time: see `KVStorage.pendingAccessTimes`.
enum SwiftReadFloor {
    enum Kind { case returningData, withAccessTime }

    /// CPU seconds per read over `keys`, on a connection of its own to `manifestPath`.
    static func measure(_ kind: Kind, manifestPath: String, keys: [String]) throws -> Double {
        var db: OpaquePointer?
        guard sqlite3_open_v2(manifestPath, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw BenchFailure("Swift floor: open failed")
        }
        defer { sqlite3_close_v2(db) }
        var select: OpaquePointer?
        guard sqlite3_exec(db, "PRAGMA cache_size=-8192; PRAGMA mmap_size=268435456;", nil, nil, nil) == SQLITE_OK,
              sqlite3_prepare_v3(db, "SELECT filename, size, inline_data FROM manifest WHERE key = ?1", -1,
                                 UInt32(SQLITE_PREPARE_PERSISTENT), &select, nil) == SQLITE_OK, let select,
              sqlite3_exec(db, "BEGIN", nil, nil, nil) == SQLITE_OK
        else { throw BenchFailure("Swift floor: prepare failed") }
        defer { sqlite3_finalize(select) }
        var accessTimes: [ExactKey: Int64] = [:]
        var bytes = 0
        let t0 = KVCacheScaleBench.threadCPU()
        for (i, key) in keys.enumerated() {
            var bound = key
            let value: Data? = bound.withUTF8 { utf8 in
                sqlite3_bind_text64(select, 1, UnsafeRawPointer(utf8.baseAddress!).assumingMemoryBound(to: CChar.self),
                                    UInt64(utf8.count), nil, UInt8(SQLITE_UTF8))
                defer { sqlite3_reset(select) }
                guard sqlite3_step(select) == SQLITE_ROW, sqlite3_column_type(select, 0) == SQLITE_NULL else { return nil }
                if kind == .withAccessTime {
                    var now = timespec()
                    clock_gettime(CLOCK_REALTIME, &now)
                    accessTimes[ExactKey(key)] = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
                }
                guard let blob = sqlite3_column_blob(select, 2) else { return Data() }
                return Data(bytes: blob, count: Int(sqlite3_column_bytes(select, 2)))
            }
            bytes += value?.count ?? 0
            if i % 1_000 == 999 { sqlite3_exec(db, "COMMIT; BEGIN", nil, nil, nil) }
        }
        let cpu = KVCacheScaleBench.threadCPU() - t0
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
        guard bytes == keys.count * KVCacheScaleBench.valueSize, kind == .returningData || accessTimes.count > 0
        else { throw BenchFailure("Swift floor: wrong reads") }
        return cpu / Double(keys.count)
    }
}

/// A key compared and hashed by its UTF-8 bytes, as `KVStorage`'s `ExactKey` (which is internal to KVCache).
private struct ExactKey: Hashable {
    let base: String
    init(_ base: String) { self.base = base }

    static func == (lhs: Self, rhs: Self) -> Bool {
        if unsafeBitCast(lhs.base, to: (UInt64, UInt64).self) == unsafeBitCast(rhs.base, to: (UInt64, UInt64).self) { return true }
        let equal = lhs.base.utf8.withContiguousStorageIfAvailable { left in
            rhs.base.utf8.withContiguousStorageIfAvailable { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
        if case let result?? = equal { return result }
        return lhs.base.utf8.elementsEqual(rhs.base.utf8)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
