@testable import KVCache
import Foundation
import XCTest

/// Transient failures at open and in use, through the fault seam: each is thrown with its cause, changes
/// nothing on disk, and once it clears every acknowledged value reads back intact. Only damage
/// (CORRUPT, NOTADB, a failed check) rebuilds, and only by an opener holding the folder alone.
final class KVStorageFaultMatrixTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// SQLite's (extended) result codes for the faults of the matrix, with the errno under them.
    static let transientFaults: [(name: String, code: Int32, errno: Int32)] = [
        ("CANTOPEN/EMFILE", 14, EMFILE), ("CANTOPEN/ENFILE", 14, ENFILE),
        ("IOERR_READ/EIO", 266, EIO), ("IOERR_WRITE/EIO", 778, EIO),
        ("FULL/ENOSPC on the WAL", 13, ENOSPC), ("IOERR_SHMOPEN/ENOSPC on -shm", 4618, ENOSPC),
        ("IOERR_SHMSIZE/ENOSPC on -shm", 4874, ENOSPC), ("CANTOPEN/ENOSPC creating -wal", 14, ENOSPC),
        ("NOMEM", 7, 0), ("PROTOCOL", 15, 0), ("READONLY", 8, 0), ("READONLY_DBMOVED", 1032, 0),
        ("BUSY", 5, 0), ("LOCKED", 6, 0), ("IOERR_FSYNC/EIO", 1034, EIO),
    ]

    /// The values of the populated store: inline and file ones.
    static func expectedValues() -> [String: Data] {
        var values: [String: Data] = [:]
        for i in 0..<12 { values["k\(i)"] = testBytes(i % 3 == 0 ? 30_000 + i : 200 + i, seed: i) }
        return values
    }

    private func populate(_ path: String) throws {
        let storage = try KVStorage(path: path, type: .mixed)
        for (key, value) in Self.expectedValues() {
            try storage.save(key: key, value: value, filename: value.count > 1_000 ? "f-\(key)" : nil)
        }
        storage.close()
    }

    /// Every value is there, the store is consistent, nothing was moved aside or recreated.
    private func assertIntact(_ path: String, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let storage = try KVStorage(path: path, type: .mixed)
        defer { storage.close() }
        XCTAssertNil(storage.recoveryError, label, file: file, line: line)
        for (key, value) in Self.expectedValues() {
            XCTAssertEqual(try storage.itemValue(forKey: key), value, "\(label): \(key)", file: file, line: line)
        }
        XCTAssertEqual(try storage._checkInvariants(), [], label, file: file, line: line)
        let aside = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.contains(".corrupt-") }
        XCTAssertEqual(aside, [], label, file: file, line: line)
    }

    /// Each transient fault at each SQLite call of an (exclusive) open: thrown with its code, store untouched.
    func testTransientFaultsAtOpenNeverWipeTheStore() throws {
        var fired = 0
        for (index, fault) in Self.transientFaults.enumerated() {
            let path = directory.path + "/open-\(index)"
            try populate(path)
            // Call 1 of `.sqliteOpen`, then each statement of the open: journal_mode … quick_check.
            let plans: [(KVStorageFaults.Operation, Int)] = [(.sqliteOpen, 1)] + (1...8).map { (.sqliteStep, $0) }
            for (operation, call) in plans {
                let label = "\(fault.name) at \(operation) #\(call)"
                let faults = KVStorageFaults()
                faults.fail(operation, onCall: call, sqliteCode: fault.code, errno: fault.errno)
                switch Result(catching: { () throws(KVCacheError) in try KVStorage(path: path, type: .mixed, faults: faults) }) {
                case .success(let storage):
                    XCTAssertNil(storage.recoveryError, label)
                    storage.close()
                case .failure(.sqlite(let code, let message, _)):
                    XCTAssertEqual(code, fault.code, label)
                    if fault.errno != 0 { XCTAssertTrue(message.contains("errno \(fault.errno)"), "\(label): \(message)") }
                    fired += 1
                case .failure(let error):
                    XCTFail("\(label): \(error)")
                }
                try assertIntact(path, label)
            }
        }
        XCTAssertGreaterThan(fired, Self.transientFaults.count * 4)
    }

    /// Each transient fault in use (reads, writes, removals, trims): thrown, nothing acknowledged lost, no rebuild.
    func testTransientFaultsInUseLoseNothingAcknowledged() throws {
        let path = directory.path + "/use"
        try populate(path)
        var acknowledged = Self.expectedValues()
        var thrown = 0
        for (index, fault) in Self.transientFaults.enumerated() {
            let faults = KVStorageFaults()
            let storage = try KVStorage(path: path, type: .mixed, faults: faults)
            faults.fail(.sqliteStep, onCall: 1 + index % 4, sqliteCode: fault.code, errno: fault.errno)
            let key = "k\(index % 12)", value = testBytes(index % 2 == 0 ? 25_000 : 300, seed: 1_000 + index)
            switch Result(catching: { () throws(KVCacheError) in
                try storage.save(key: key, value: value, filename: value.count > 1_000 ? "f-\(key)" : nil)
            }) {
            case .success: acknowledged[key] = value
            case .failure: thrown += 1
            }
            faults.disarm()
            XCTAssertNil(storage.recoveryError, fault.name)
            for (key, value) in acknowledged { XCTAssertEqual(try storage.itemValue(forKey: key), value, "\(fault.name): \(key)") }
            storage.close()
        }
        // I/O errors on value files: EIO reading and writing, ENOSPC writing.
        for (operation, code) in [(KVStorageFaults.Operation.fileRead, EIO), (.fileWrite, EIO), (.fileWrite, ENOSPC)] {
            let faults = KVStorageFaults()
            let storage = try KVStorage(path: path, type: .mixed, faults: faults)
            faults.fail(operation, onCall: 1, errno: code)
            let outcome = Result { () throws(KVCacheError) in
                if operation == .fileRead {
                    _ = try storage.itemValue(forKey: "k0")
                } else {
                    try storage.save(key: "k3", value: testBytes(40_000, seed: 77), filename: "f-k3")
                }
            }
            if case .failure(.io(let errno, _, _)) = outcome {
                XCTAssertEqual(errno, code)
            } else {
                XCTFail("\(operation) \(code): \(outcome)")
                if operation == .fileWrite { acknowledged["k3"] = testBytes(40_000, seed: 77) }
            }
            XCTAssertNil(storage.recoveryError)
            for (key, value) in acknowledged { XCTAssertEqual(try storage.itemValue(forKey: key), value, "\(operation): \(key)") }
            storage.close()
        }
        XCTAssertGreaterThan(thrown, Self.transientFaults.count / 2)
        let storage = try KVStorage(path: path, type: .mixed)
        XCTAssertNil(storage.recoveryError)
        XCTAssertEqual(try storage._checkInvariants(), [])
        for (key, value) in acknowledged { XCTAssertEqual(try storage.itemValue(forKey: key), value, key) }
    }

    /// Damage at open, found by an opener holding the folder alone: rebuilt (and reported).
    func testDamageAtOpenIsRebuiltByTheExclusiveOpener() throws {
        for (index, code) in [Int32(11), 26, 267 /* CORRUPT_VTAB */, 779 /* CORRUPT_INDEX */].enumerated() {
            let path = directory.path + "/damage-\(index)"
            try populate(path)
            let faults = KVStorageFaults()
            faults.fail(.sqliteStep, onCall: 1, sqliteCode: code)
            let storage = try KVStorage(path: path, type: .mixed, faults: faults)
            guard case .manifestRecreated = storage.recoveryError else { return XCTFail("\(code): \(String(describing: storage.recoveryError))") }
            XCTAssertEqual(try storage._checkInvariants(), [])
            XCTAssertEqual(try storage.itemsCount(), 0)
        }
    }

    /// Damage met by an opener while another instance has the folder open: thrown, nothing rebuilt, the
    /// other instance keeps every value; the first opener alone rebuilds later.
    func testDamageAtOpenIsNotRebuiltUnderAnotherInstance() throws {
        let path = directory.path + "/shared"
        try populate(path)
        let holder = try KVStorage(path: path, type: .mixed)
        let faults = KVStorageFaults()
        faults.fail(.sqliteStep, onCall: 1, sqliteCode: 26)
        XCTAssertThrowsError(try KVStorage(path: path, type: .mixed, faults: faults)) { error in
            guard case KVCacheError.sqlite(26, _, _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.contains(".corrupt-") }, [])
        // The holder noticed the request, reopened (alone now: it checked the manifest and found it sound).
        for (key, value) in Self.expectedValues() { XCTAssertEqual(try holder.itemValue(forKey: key), value, key) }
        XCTAssertEqual(holder.recoveryState.reopens, 1)
        XCTAssertNil(holder.recoveryError)
        holder.close()
        try assertIntact(path, "after the holder closed")
    }

    /// Real damage: garbage over the manifest while a second instance has it open: the newcomer does not
    /// rebuild (typed error); once it is alone, an opener does.
    func testGarbageManifestIsRebuiltOnlyByAnOpenerHoldingTheFolderAlone() throws {
        let path = directory.path + "/garbage"
        try populate(path)
        let holder = try KVStorage(path: path, type: .mixed)
        holder.recoveryState.lockWait = 0.05
        _ = try holder.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
        try testBytes(64 * 1_024, seed: 5).write(to: URL(fileURLWithPath: path + "/manifest.sqlite"))
        XCTAssertThrowsError(try KVStorage(path: path, type: .mixed)) { error in
            XCTAssertTrue(SQLiteCode.isCorruption(error as! KVCacheError), "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.contains(".corrupt-") }, [])
        XCTAssertEqual(try directory.files(in: "garbage/data").count, 4)
        // The holder, asked to step aside, finds itself alone: it checks the manifest and rebuilds it.
        XCTAssertNil(try holder.itemValue(forKey: "k1"))
        guard case .manifestRecreated = holder.recoveryError else { return XCTFail("\(String(describing: holder.recoveryError))") }
        try holder.save(key: "after", value: Data([1]))
        holder.close()
        let reopened = try KVStorage(path: path, type: .mixed)
        XCTAssertEqual(try reopened.itemValue(forKey: "after"), Data([1]))
        XCTAssertEqual(try reopened._checkInvariants(), [])
        let movedAside = try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        XCTAssertEqual(movedAside.count, 1, "\(movedAside)")
    }
}
