@testable import KVCache
import XCTest

/// What a crash or a damaged disk leaves behind is repaired at open, and reported.
final class KVStorageRecoveryTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Given a store with file and inline values, closed.
    private func makePopulatedStore() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<20 {
            try storage.save(key: "k\(i)", value: testBytes(3_000 + i, seed: i), filename: i % 2 == 0 ? "f\(i)" : nil)
        }
        storage.close()
    }

    /// Leaves the folder as an instance of an older version killed while it had the folder open does: its
    /// open-instance count (in `lock`) never went back to 0, so the next first opener checks and cleans up,
    /// scanning every row and file (the older version kept no intent journal). A store closed cleanly is not
    /// scanned at open (see KVStorage+CleanShutdown.swift).
    private func markUncleanShutdown() throws {
        try Data("1\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/lock"))
    }

    func testOpenRemovesTemporariesOrphansAndRowsWithoutFiles() throws {
        try makePopulatedStore()
        try markUncleanShutdown()
        // A crash mid-save leaves a temporary and a renamed-but-unreferenced file; a lost file leaves a row.
        try Data([1]).write(to: URL(fileURLWithPath: directory.path + "/tmp/123-1-1"))
        try Data([2]).write(to: URL(fileURLWithPath: directory.path + "/data/orphan"))
        try FileManager.default.removeItem(atPath: directory.path + "/data/f4")
        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try storage._checkInvariants(), [])
        XCTAssertFalse(try storage.containsItem(forKey: "k4"))
        XCTAssertEqual(try storage.itemsCount(), 19)
        for i in 0..<20 where i != 4 { XCTAssertEqual(try storage.itemValue(forKey: "k\(i)"), testBytes(3_000 + i, seed: i)) }
        XCTAssertNil(storage.recoveryError)
    }

    /// A second instance on an open folder must not clean up: the first may be mid-write.
    func testSecondOpenerDoesNotCleanUp() throws {
        let first = try KVStorage(path: directory.path, type: .mixed)
        try Data([2]).write(to: URL(fileURLWithPath: directory.path + "/data/in-flight"))
        let second = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try directory.files(in: "data"), ["in-flight"])
        second.close()
        first.close()
        try markUncleanShutdown() // as if `first` had been killed mid-write
        let third = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertEqual(try directory.files(in: "data"), [])
        XCTAssertEqual(try third._checkInvariants(), [])
    }

    private func assertRecovers(file: StaticString = #filePath, line: UInt = #line, damage: () throws -> Void) throws {
        try makePopulatedStore()
        try damage()
        try markUncleanShutdown()
        let storage = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertNotNil(storage.recoveryError, file: file, line: line)
        XCTAssertEqual(try storage._checkInvariants(), [], file: file, line: line)
        try storage.save(key: "new", value: testBytes(50_000, seed: 99), filename: "fnew")
        XCTAssertEqual(try storage.itemValue(forKey: "new"), testBytes(50_000, seed: 99), file: file, line: line)
        XCTAssertEqual(try storage._checkInvariants(), [], file: file, line: line)
    }

    func testManifestOverwrittenWithGarbage() throws {
        try assertRecovers {
            try testBytes(64 * 1_024, seed: 7).write(to: URL(fileURLWithPath: directory.path + "/manifest.sqlite"))
            try? FileManager.default.removeItem(atPath: directory.path + "/manifest.sqlite-wal")
        }
        XCTAssertTrue(try directory.files(in: "").contains { $0.hasPrefix("manifest.sqlite.corrupt-") })
    }

    func testManifestTruncated() throws {
        try assertRecovers {
            let path = directory.path + "/manifest.sqlite"
            // Fold the WAL in so the main file holds the pages, then cut it in half.
            let storage = try KVStorage(path: directory.path, type: .mixed)
            _ = try storage.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
            storage.close()
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            XCTAssertGreaterThan(size, 4_096)
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: UInt64(size / 2))
            try handle.close()
        }
    }

    func testManifestDeletedWhileFilesRemain() throws {
        try assertRecovers {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: directory.path + "/manifest.sqlite" + suffix)
            }
        }
        XCTAssertEqual(try directory.files(in: "data"), ["fnew"])
    }

    /// Damage found while in use by the only instance: the failing call reports it, the manifest is checked,
    /// found damaged and rebuilt, and the next call works on a fresh manifest.
    func testCorruptionDetectedAtRuntimeRecreatesTheManifest() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .mixed, faults: faults)
        try storage.save(key: "a", value: testBytes(10, seed: 1))
        _ = try storage.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
        try testBytes(64 * 1_024, seed: 7).write(to: URL(fileURLWithPath: directory.path + "/manifest.sqlite"))
        // SQLite may still serve pages from its cache: the seam makes the next step report the damage.
        faults.fail(.sqliteStep, onCall: 1, sqliteCode: 11)
        XCTAssertThrowsError(try storage.itemValue(forKey: "a"))
        guard case .manifestRecreated = storage.recoveryError else { return XCTFail("\(String(describing: storage.recoveryError))") }
        XCTAssertFalse(try storage.containsItem(forKey: "a"))
        try storage.save(key: "b", value: testBytes(10, seed: 2))
        XCTAssertEqual(try storage.itemValue(forKey: "b"), testBytes(10, seed: 2))
    }

    /// A corruption error the check does not confirm rebuilds nothing: every value stays.
    func testUnconfirmedCorruptionErrorLosesNothing() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .mixed, faults: faults)
        try storage.save(key: "a", value: testBytes(10, seed: 1))
        try storage.save(key: "f", value: testBytes(30_000, seed: 2), filename: "f")
        faults.fail(.sqliteStep, onCall: 1, sqliteCode: 11)
        XCTAssertThrowsError(try storage.itemValue(forKey: "a"))
        XCTAssertNil(storage.recoveryError)
        XCTAssertEqual(try storage.itemValue(forKey: "a"), testBytes(10, seed: 1))
        XCTAssertEqual(try storage.itemValue(forKey: "f"), testBytes(30_000, seed: 2))
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// A busy manifest is an error, never a reason to reset.
    func testBusyManifestIsNotTreatedAsCorrupt() throws {
        let holder = try KVStorage(path: directory.path, type: .mixed)
        try holder.save(key: "a", value: testBytes(10, seed: 1))
        let other = try KVStorage(path: directory.path, type: .mixed)
        try holder.database.execute("BEGIN EXCLUSIVE")
        // Short wait: the default 5 s busy timeout would only slow the test down.
        _ = try other.database.textRows("PRAGMA busy_timeout=50")
        XCTAssertThrowsError(try other.save(key: "b", value: Data([1]))) { error in
            XCTAssertTrue((error as? KVCacheError)?.isBusy == true, "\(error)")
        }
        XCTAssertNil(other.recoveryError)
        try holder.database.execute("COMMIT")
        XCTAssertEqual(try other.itemValue(forKey: "a"), testBytes(10, seed: 1))
    }
}
