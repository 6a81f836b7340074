@testable import KVCache
import Foundation
import TestSupport

extension DiskCache {
    /// Review 7: saves `keys` entries (`key-<i>`, `testBytes(valueSize, seed: i)`), then appends `rows` rows to
    /// `access_log` (as a long run of reads between two trims leaves it) with time `i` (or 0), and returns the
    /// log's cap.
    func review7Fill(keys: Int, valueSize: Int = 64, rows: Int, timeZero: Bool = false) throws -> Int64 {
        for i in 0..<keys { try setObject(testBytes(valueSize, seed: i), forKey: "key-\(i)") }
        return try core.storage.withLock { (storage: inout KVStorage) throws -> Int64 in
            storage.endReadSnapshot()
            try storage.database.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                INSERT INTO access_log (key, time) SELECT 'key-' || (i % \(keys)), \(timeZero ? "0" : "i") FROM n
                """)
            return try storage.accessLogCap()
        }
    }

    /// Review 7: `access_log`'s length now (one lock hold).
    func review7LogLength() throws -> Int64 {
        try core.storage.withLock { (s: inout KVStorage) throws -> Int64 in try s.accessLogLength() }
    }
}
