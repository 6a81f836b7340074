@testable import KVCache
import Foundation
import XCTest

/// `usage()`, `allKeys()` and `verify()` read fresh; the registry of live caches does not grow with dead
/// ones and keeps folders whose paths differ as bytes apart; the durability order with `syncsFiles`.
final class FreshReadAndRegistryTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// A commit by another instance just before the call is seen, though this cache holds a read snapshot.
    func testUsageAllKeysAndVerifySeeAnotherInstancesCommit() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        cache.core.storage.withLock { $0.snapshotAgeLimit = 60 }
        try cache.setObject(Data([1]), forKey: "a")
        let other = try KVStorage(path: directory.path, type: .mixed)
        defer { other.close() }
        for (label, read) in [("allKeys", { () throws -> Int in try cache.allKeys().count }),
                              ("usage", { () throws -> Int in try cache.usage().entryCount }),
                              ("verify", { () throws -> Int in try cache.verify().usage.entryCount })] {
            XCTAssertTrue(try cache.containsObject(forKey: "a")) // holds a snapshot from here
            XCTAssertTrue(cache.core.storage.withLock { $0.hasReadSnapshot })
            let before = try read()
            try other.save(key: "new-\(label)", value: Data([2]))
            XCTAssertEqual(try read(), before + 1, label)
        }
    }

    func testRegistryDropsDeadCachesAndKeepsByteDifferentPathsApart() throws {
        let before = DiskCacheRegistry.entryCount
        for i in 0..<30 {
            let cache = try DiskCache(path: directory.path + "/c\(i)")
            try cache.setObject(Data([UInt8(i)]), forKey: "k")
        }
        _ = try DiskCache(path: directory.path + "/last")
        XCTAssertLessThanOrEqual(DiskCacheRegistry.entryCount, before + 2)

        let precomposed = try DiskCache(path: directory.path + "/\u{E9}")
        let decomposed = try DiskCache(path: directory.path + "/e\u{301}")
        try precomposed.setObject(Data([1]), forKey: "k")
        XCTAssertNil(try decomposed.object(forKey: "k"))
        XCTAssertNotEqual(Array(precomposed.path.utf8), Array(decomposed.path.utf8))
    }

    /// With `syncsFiles`, a file value's rename into data/ is made durable (folder fsync) before the COMMIT
    /// that makes its row durable, and the old file leaves data/ only after it: a power loss keeps the old
    /// value or the new one, never neither. A failed folder fsync fails the save and keeps the old value.
    func testSyncsFilesOrdersDataFolderSyncBeforeCommitAndTrashAfter() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .mixed, syncsFiles: true, faults: faults)
        try storage.save(key: "k", value: testBytes(30_000, seed: 1), filename: "f")
        faults.startRecording()
        try storage.save(key: "k", value: testBytes(30_000, seed: 2), filename: "f")
        let log = faults.recorded
        let renames = log.indices.filter { log[$0] == .rename }
        let folderSync = try XCTUnwrap(log.firstIndex(of: .directorySync), "\(log)")
        XCTAssertEqual(renames.count, 2, "\(log)")
        XCTAssertLessThan(log.firstIndex(of: .fileSync) ?? .max, renames[0])
        XCTAssertLessThan(renames[0], folderSync)
        // The COMMIT is the last SQLite step before the move to trash.
        let commit = try XCTUnwrap(log[..<renames[1]].lastIndex(of: .sqliteStep))
        XCTAssertLessThan(folderSync, commit)

        faults.fail(.directorySync, onCall: 1, errno: EIO)
        XCTAssertThrowsError(try storage.save(key: "k", value: testBytes(30_000, seed: 3), filename: "f"))
        XCTAssertEqual(try storage.itemValue(forKey: "k"), testBytes(30_000, seed: 2))
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// Without `syncsFiles` (the default), nothing is fsynced: the documented contract is that a power loss
    /// may lose the latest writes (see the README's "On disk").
    func testWithoutSyncsFilesNothingIsFsynced() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .mixed, faults: faults)
        faults.startRecording()
        try storage.save(key: "k", value: testBytes(30_000, seed: 1), filename: "f")
        try storage.save(key: "k", value: testBytes(30_000, seed: 2), filename: "f")
        XCTAssertFalse(faults.recorded.contains(.directorySync))
        XCTAssertFalse(faults.recorded.contains(.fileSync))
    }
}
