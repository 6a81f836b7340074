@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// Review 7: the background folds (03bad7c) run one batch per task so that the checkpoints their commits make
/// due run in between and "the checkpoint must never run inside the store lock": the WAL must never reach
/// `KVStorage.inlineCheckpointFrames`, where a commit (under the store lock) checkpoints itself. A stream of
/// reads over 8,000 entries with 2 KB inline values, the access log past its cap (every flush owes 4 folds,
/// each rewriting 256 rows), samples the WAL's frame count under the lock and reads the WAL file's size at the
/// end (a restart does not shrink it). Seen by the reviewer: 16,218–16,640 frames in every run — and as many
/// with the reads folding inline (`defersLogFolds = false`, the code before dba3143) and with no folds at all
/// (the log under its cap): the access-time appends of a read stream alone take the WAL to its bound; the
/// background queue's checkpoints never let it restart while the reads go on.
final class KVCacheReadStreamWALBoundReviewTests: XCTestCase {
    func testAReadStreamNeverTakesTheWALToItsInlineBound() throws {
        let directory = try TemporaryDirectory("kvcache-fold-wal")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let keys = 8_000
        _ = try cache.review7Fill(keys: keys, valueSize: 2_048, rows: 65536)
        try cache.core.storage.withLock { (storage: inout KVStorage) throws in
            storage.endReadSnapshot()
            // The writes above took the WAL to its bound themselves (a stream of commits, see the report):
            // start the read phase from an empty WAL file, so its size below is the read phase's.
            _ = try storage.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
            // The WAL hook counts frames at commits only: until the read phase's first commit it would still
            // show the fill's last count (up to the bound), and the first sample would be that.
            XCTAssertEqual(try storage.database.textRows("PRAGMA wal_checkpoint(PASSIVE)").first, "0")
            storage.database.walState?.frames = 0
        }
        let setupWAL = (try FileManager.default.attributesOfItem(atPath: directory.path + "/manifest.sqlite-wal")[.size] as? Int) ?? 0
        print("WAL file after the writes: \(setupWAL) bytes")
        let largest = Atomic<Int32>(0)
        let failures = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for n in 0..<60_000 {
                let i = (n * 7 + worker * 4_000) % keys
                if (try? cache.object(forKey: "key-\(i)")) == nil { failures.add(1, ordering: .relaxed) }
                if n % 256 == 0 {
                    let frames = cache.core.storage.withLock { $0.database.walState?.frames ?? 0 }
                    largest.max(frames, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        // The WAL file is not truncated when it restarts: its size is the most frames it ever held.
        let pageSize = try cache.core.storage.withLock { (s: inout KVStorage) throws -> Int in
            Int(try s.database.textRows("PRAGMA page_size").first ?? "") ?? 4_096
        }
        let walBytes = (try FileManager.default.attributesOfItem(atPath: directory.path + "/manifest.sqlite-wal")[.size] as? Int) ?? 0
        let walFrames = Int32((walBytes - 32) / (pageSize + 24))
        print("largest WAL: \(largest.load(ordering: .relaxed)) frames sampled, \(walFrames) frames in the file")
        largest.max(walFrames, ordering: .relaxed)
        XCTAssertLessThan(largest.load(ordering: .relaxed), KVStorage.inlineCheckpointFrames,
                          "the WAL reached its inline bound: a commit checkpointed inside the store lock")
    }
}
