@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Read snapshots across real processes: another process's commit is seen by our next read, and a process
/// killed while holding a snapshot holds back nothing afterwards.
final class SnapshotProcessTests: XCTestCase {
    /// Child side: writes an inline and a file value, then exits.
    func testSnapshotChildWriter() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_SNAPSHOT_WRITER_PATH"]
        else { throw XCTSkip("snapshot writer: runs only inside testAnotherProcesssCommitIsSeenByOurNextRead") }
        let cache = try DiskCache(path: path, inlineThreshold: 1_000)
        try cache.setObject(Data("child".utf8), forKey: "inline")
        try cache.setObject(testBytes(5_000, seed: 5), forKey: "file")
        emitLine("WROTE")
    }

    /// Child side: opens the folder, reads (so its snapshot is open), says READY and waits to be killed.
    func testSnapshotChildHolder() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_SNAPSHOT_HOLDER_PATH"]
        else { throw XCTSkip("snapshot holder: runs only inside testProcessKilledWhileHoldingASnapshotHoldsNothing") }
        let storage = try KVStorage(path: path, type: .sqlite)
        XCTAssertNotNil(try storage.itemValue(forKey: "k0"))
        XCTAssertTrue(storage.hasReadSnapshot)
        emitLine("READY")
        awaitStartSignal()
    }

    func testAnotherProcesssCommitIsSeenByOurNextRead() throws {
        let directory = try TemporaryDirectory("kvcache-snapshot")
        defer { try? directory.remove() }
        // A bare KVStorage: DiskCache would end an idle snapshot while the child starts.
        let storage = try KVStorage(path: directory.path, type: .mixed)
        storage.snapshotAgeLimit = 3_600 // only the child's commits may end it
        try storage.save(key: "inline", value: Data("parent".utf8))
        XCTAssertEqual(try storage.itemValue(forKey: "inline"), Data("parent".utf8))
        XCTAssertNil(try storage.item(forKey: "file"))
        XCTAssertTrue(storage.hasReadSnapshot)
        let begun = storage.snapshotsBegun

        let child = try ChildProcess(test: "KVCacheTests.SnapshotProcessTests/testSnapshotChildWriter",
                                     environment: ["KVCACHE_SNAPSHOT_WRITER_PATH": directory.path])
        let lines = child.finish()
        XCTAssertEqual(child.process.terminationStatus, 0)
        XCTAssertTrue(lines.contains("WROTE"), "\(lines.suffix(5))")

        XCTAssertTrue(storage.hasReadSnapshot, "nothing of ours ended the snapshot")
        XCTAssertEqual(try storage.itemValue(forKey: "inline"), Data("child".utf8))
        XCTAssertEqual(try storage.itemValue(forKey: "file"), testBytes(5_000, seed: 5))
        XCTAssertEqual(storage.snapshotsBegun, begun + 1, "the child's commits renewed the snapshot once")
    }

    func testProcessKilledWhileHoldingASnapshotHoldsNothing() throws {
        let directory = try TemporaryDirectory("kvcache-snapshot")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        for i in 0..<20 { try storage.save(key: "k\(i)", value: testBytes(3_000, seed: i)) }

        let child = try ChildProcess(test: "KVCacheTests.SnapshotProcessTests/testSnapshotChildHolder",
                                     environment: ["KVCACHE_SNAPSHOT_HOLDER_PATH": directory.path])
        XCTAssertTrue(child.waitUntilReady(timeout: 60))
        for i in 0..<20 { try storage.save(key: "k\(i)", value: testBytes(3_000, seed: 100 + i)) }
        // While the child lives, its snapshot keeps the newer frames out of the database file.
        let pinned = try checkpoint(storage, "PASSIVE")
        XCTAssertGreaterThan(pinned.log, pinned.checkpointed, "the child's snapshot should pin the WAL")

        child.kill()
        _ = child.finish()
        XCTAssertTrue(child.wasKilled)
        // Dead, it holds nothing: a full checkpoint that resets the WAL goes through at once.
        let after = try checkpoint(storage, "TRUNCATE")
        XCTAssertEqual(after.busy, 0)
        XCTAssertEqual(after.log, 0)
        XCTAssertEqual(try storage.itemValue(forKey: "k7"), testBytes(3_000, seed: 107))
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// Runs `PRAGMA wal_checkpoint(mode)` outside any snapshot; returns its three columns.
    private func checkpoint(_ storage: KVStorage, _ mode: String) throws -> (busy: Int64, log: Int64, checkpointed: Int64) {
        storage.endReadSnapshot()
        let statement = try storage.database.prepare("PRAGMA wal_checkpoint(\(mode))")
        defer { statement.reset() }
        XCTAssertTrue(try statement.step())
        return (statement.int64(0), statement.int64(1), statement.int64(2))
    }
}
