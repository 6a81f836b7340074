@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// The recovery protocol between instances of one folder (see "Recovery" in KVStorage+Recovery.swift):
/// never a rebuild under another instance, requests noticed, repairs done by whoever holds the folder alone.
final class KVStorageRecoveryProtocolTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    private var movedAside: [String] {
        get throws { try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".corrupt-") } }
    }

    /// Instance A meets a corruption error while B (same process) has the folder open: A does not rebuild;
    /// B's acknowledged writes stay visible to A, and A's to B: one store, not two.
    func testCorruptionErrorUnderASecondInstanceNeverSplitsTheStore() throws {
        let faults = KVStorageFaults()
        let first = try KVStorage(path: directory.path, type: .mixed, faults: faults)
        first.recoveryState.lockWait = 0.02
        let second = try KVStorage(path: directory.path, type: .mixed)
        second.recoveryState.lockWait = 0.02
        try first.save(key: "a", value: testBytes(30_000, seed: 1), filename: "fa")
        try second.save(key: "b", value: testBytes(100, seed: 2))

        faults.fail(.sqliteStep, onCall: 1, sqliteCode: 11)
        XCTAssertThrowsError(try first.itemValue(forKey: "a")) { error in
            XCTAssertTrue(SQLiteCode.isCorruption(error as! KVCacheError), "\(error)")
        }
        XCTAssertNil(first.recoveryError)
        try second.save(key: "c", value: testBytes(40_000, seed: 3), filename: "fc")
        XCTAssertGreaterThanOrEqual(second.recoveryState.reopens, 1, "the second instance did not notice the request")
        try first.save(key: "d", value: testBytes(50, seed: 4))

        for storage in [first, second] {
            XCTAssertEqual(try storage.itemValue(forKey: "a"), testBytes(30_000, seed: 1))
            XCTAssertEqual(try storage.itemValue(forKey: "b"), testBytes(100, seed: 2))
            XCTAssertEqual(try storage.itemValue(forKey: "c"), testBytes(40_000, seed: 3))
            XCTAssertEqual(try storage.itemValue(forKey: "d"), testBytes(50, seed: 4))
        }
        XCTAssertEqual(try movedAside, [])
        first.close()
        XCTAssertEqual(try second._checkInvariants(), [])
    }

    /// Real damage (garbage over the manifest) while two instances work on two threads: the first to meet
    /// it asks, both step aside, exactly one (holding the folder alone) rebuilds, and afterwards each sees
    /// the other's writes.
    func testBothInstancesStepAsideAndOneRebuilds() throws {
        let first = try KVStorage(path: directory.path, type: .mixed)
        let second = try KVStorage(path: directory.path, type: .mixed)
        for storage in [first, second] { storage.recoveryState.lockWait = 10 }
        try first.save(key: "old", value: testBytes(30_000, seed: 1), filename: "fold")
        _ = try first.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
        try testBytes(64 * 1_024, seed: 9).write(to: URL(fileURLWithPath: directory.path + "/manifest.sqlite"))

        // The second instance keeps working on its own thread until the first is through its recovery.
        let worker = SendableBox(second)
        let workerDone = expectation(description: "second instance's thread done")
        let firstDone = Atomic(false)
        DispatchQueue.global().async {
            let storage = worker.value
            while !firstDone.load(ordering: .acquiring) {
                // It may meet the damage itself (then it asks too) or see it repaired: either is fine.
                _ = Result { () throws(KVCacheError) in try storage.containsItem(forKey: "old") }
            }
            workerDone.fulfill()
        }
        // The first meets the damage (thrown here: SQLite's page cache may hide the garbage from a read).
        XCTAssertThrowsError(try first.guarded { () throws(KVCacheError) in
            throw KVCacheError.sqlite(code: 11, message: "database disk image is malformed", operation: "test")
        })
        firstDone.store(true, ordering: .releasing)
        wait(for: [workerDone], timeout: 60)
        XCTAssertGreaterThanOrEqual(second.recoveryState.reopens, 1, "the second instance did not notice the request")

        let rebuilt = [first, second].filter { if case .manifestRecreated = $0.recoveryError { true } else { false } }
        XCTAssertEqual(rebuilt.count, 1, "exactly one instance rebuilds")
        XCTAssertEqual(try movedAside.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.count, 1)
        try first.save(key: "from-first", value: testBytes(25_000, seed: 2), filename: "f1")
        try second.save(key: "from-second", value: testBytes(10, seed: 3))
        for storage in [first, second] {
            XCTAssertEqual(try storage.itemValue(forKey: "from-first"), testBytes(25_000, seed: 2))
            XCTAssertEqual(try storage.itemValue(forKey: "from-second"), testBytes(10, seed: 3))
        }
        first.close()
        XCTAssertEqual(try second._checkInvariants(), [])
        second.close()
    }
}

/// Hands a non-Sendable value to one other thread, which alone uses it afterwards.
final class SendableBox<Value>: @unchecked Sendable { // the test hands it over once and no longer touches it meanwhile
    let value: Value
    init(_ value: Value) { self.value = value }
}
