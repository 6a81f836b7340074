@testable import KVCache
import Foundation
import XCTest

/// Reads share one SQLite read snapshot (see "Reads" in KVStorage.swift): these tests pin down when it
/// ends. A second `KVStorage` on the same folder has its own connection and its own mapping of the
/// generation file, as another process would (`KVStorageSnapshotProcessTests` uses real processes).
final class KVStorageSnapshotTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    private var generationPath: String { directory.path + "/generation" }

    func testConsecutiveReadsShareOneSnapshotAndOurWriteEndsIt() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        storage.snapshotAgeLimit = 3_600 // only what the test does may end a snapshot
        try storage.save(key: "a", value: Data([1]))
        try storage.save(key: "f", value: testBytes(3_000, seed: 1), filename: "f")
        XCTAssertFalse(storage.hasReadSnapshot)
        let begun = storage.snapshotsBegun
        for _ in 0..<10 {
            XCTAssertEqual(try storage.itemValue(forKey: "a"), Data([1]))
            XCTAssertEqual(try storage.itemValue(forKey: "f"), testBytes(3_000, seed: 1))
            XCTAssertNil(try storage.item(forKey: "missing"))
            XCTAssertTrue(try storage.containsItem(forKey: "a"))
        }
        XCTAssertEqual(storage.snapshotsBegun, begun + 1, "40 reads, one snapshot")
        XCTAssertTrue(storage.hasReadSnapshot)

        // Read-your-writes: each kind of write ends the snapshot and the next read sees it.
        try storage.save(key: "a", value: Data([2]))
        XCTAssertFalse(storage.hasReadSnapshot)
        XCTAssertEqual(try storage.itemValue(forKey: "a"), Data([2]))
        try storage.save(key: "f", value: testBytes(3_000, seed: 2), filename: "f")
        XCTAssertEqual(try storage.itemValue(forKey: "f"), testBytes(3_000, seed: 2))
        XCTAssertTrue(try storage.setExtendedData(Data([9]), forKey: "a"))
        XCTAssertEqual(try storage.item(forKey: "a")?.extendedData, Data([9]))
        try storage.removeItem(forKey: "f")
        XCTAssertNil(try storage.item(forKey: "f"))
        XCTAssertEqual(try storage.itemsCount(), 1)
        XCTAssertEqual(storage.snapshotsBegun, begun + 5)
        storage.endReadSnapshot()
        XCTAssertFalse(storage.hasReadSnapshot)
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    func testCommitByAnotherConnectionIsSeenByTheNextRead() throws {
        let reader = try KVStorage(path: directory.path, type: .mixed)
        let writer = try KVStorage(path: directory.path, type: .mixed)
        reader.snapshotAgeLimit = 3_600 // only the generation may end the reader's snapshot
        try writer.save(key: "inline", value: Data([1]))
        try writer.save(key: "file", value: testBytes(5_000, seed: 1), filename: "file")
        // The reader's snapshot is open and has seen the old values and a miss.
        XCTAssertEqual(try reader.itemValue(forKey: "inline"), Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "file"), testBytes(5_000, seed: 1))
        XCTAssertNil(try reader.item(forKey: "new"))
        XCTAssertTrue(reader.hasReadSnapshot)

        try writer.save(key: "new", value: Data([7]))
        XCTAssertEqual(try reader.itemValue(forKey: "new"), Data([7]))
        try writer.save(key: "inline", value: Data([2]))
        XCTAssertEqual(try reader.itemValue(forKey: "inline"), Data([2]))
        try writer.save(key: "file", value: testBytes(6_000, seed: 2), filename: "file")
        XCTAssertEqual(try reader.itemValue(forKey: "file"), testBytes(6_000, seed: 2))
        try writer.removeItem(forKey: "new")
        XCTAssertNil(try reader.item(forKey: "new"))
        XCTAssertFalse(try reader.containsItem(forKey: "new"))
    }

    func testASnapshotThatMissedACommitIsRenewedWithinTheReadLimit() throws {
        // A writer that dies between COMMIT and its generation increment: simulated by making the reader's
        // snapshot claim the generation after the commit.
        let reader = try KVStorage(path: directory.path, type: .sqlite)
        let writer = try KVStorage(path: directory.path, type: .sqlite)
        reader.snapshotReadLimit = 3
        reader.snapshotAgeLimit = 3_600
        try writer.save(key: "k", value: Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([1]))
        try writer.save(key: "k", value: Data([2]))
        reader.snapshot.generation = reader.generation.current
        // The snapshot really is shared: the reads it still serves see the value from before the commit.
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([2]), "the 4th read must come from a new snapshot")
    }

    func testMissingValueFileRetriesInAFreshSnapshotBeforeCountingAsDamaged() throws {
        let reader = try KVStorage(path: directory.path, type: .file)
        let writer = try KVStorage(path: directory.path, type: .file)
        try writer.save(key: "k", value: testBytes(100, seed: 1), filename: "k")
        XCTAssertEqual(try reader.itemValue(forKey: "k"), testBytes(100, seed: 1))
        // Replace (k → k.1, k trashed) and hide the commit from the reader's generation check.
        try writer.save(key: "k", value: testBytes(200, seed: 2), filename: "k")
        reader.snapshot.generation = reader.generation.current
        XCTAssertEqual(try reader.itemValue(forKey: "k"), testBytes(200, seed: 2))
        XCTAssertEqual(try writer._checkInvariants(), [], "the replaced entry was not removed as damaged")
    }

    func testGenerationFileOverwrittenWithGarbageOrRemovedIsRecreated() throws {
        let reader = try KVStorage(path: directory.path, type: .sqlite)
        reader.generation.revalidationInterval = 0 // look at the path every time, not every 50 ms
        try reader.save(key: "k", value: Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([1]))

        // Garbage over the header while in use: the next opener repairs it; readers keep seeing commits.
        try Data(repeating: 0xA5, count: 16).write(to: URL(fileURLWithPath: generationPath))
        let writer = try KVStorage(path: directory.path, type: .sqlite)
        writer.generation.revalidationInterval = 0
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: generationPath)).prefix(8), Data("WKVGENC1".utf8))
        try writer.save(key: "k", value: Data([2]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([2]))

        // Removed while in use: a new opener creates a new file; the others map it again when they next
        // begin a snapshot or write.
        XCTAssertEqual(unlink(generationPath), 0)
        let third = try KVStorage(path: directory.path, type: .sqlite)
        reader.endReadSnapshot()
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([2])) // begins a snapshot: remaps
        try writer.save(key: "k", value: Data([3])) // remaps before writing, bumps the new file
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([3]))
        try third.save(key: "k", value: Data([4]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([4]))
    }

    func testTruncatedOrEmptyGenerationFileIsRecreatedAtOpen() throws {
        for length in [0, 3, 12] {
            do {
                let storage = try KVStorage(path: directory.path, type: .sqlite)
                try storage.save(key: "k", value: Data([UInt8(length)]))
            }
            XCTAssertEqual(truncate(generationPath, off_t(length)), 0)
            let storage = try KVStorage(path: directory.path, type: .sqlite)
            XCTAssertEqual(try storage.itemValue(forKey: "k"), Data([UInt8(length)]))
            let header = try Data(contentsOf: URL(fileURLWithPath: generationPath))
            XCTAssertEqual(header.count, CommitGeneration.size)
            XCTAssertEqual(header.prefix(8), Data("WKVGENC1".utf8))
            let before = storage.generation.current
            try storage.save(key: "k", value: Data([1]))
            XCTAssertEqual(storage.generation.current, before &+ 1)
        }
    }

    func testDiskCacheReleasesAnIdleSnapshot() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 100)
        try cache.setObject(Data([1]), forKey: "k")
        XCTAssertEqual(try cache.object(forKey: "k"), Data([1]))
        XCTAssertTrue(cache.core.storage.withLock { $0.hasReadSnapshot })
        let released = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in
            !cache.core.storage.withLock { $0.hasReadSnapshot }
        }, object: nil)
        wait(for: [released], timeout: 10)
        // The folder is removed in tearDown, right after `cache` is released: the release closes the store
        // and waits for its background work (the snapshot release itself had held the core last, and closed
        // it while the removal walked the folder: EPERM twice in CI; `DiskCacheLastHandleTests`).
    }
}
