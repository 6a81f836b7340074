@testable import KVCache
import XCTest

final class KVStorageTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    private func assertConsistent(_ storage: KVStorage, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try storage._checkInvariants(), [], file: file, line: line)
    }

    func testSaveAndReadBackInEachType() throws {
        for type in [KVStorage.StorageType.sqlite, .file, .mixed] {
            let storage = try KVStorage(path: directory.path + "/\(type)", type: type)
            let small = testBytes(100, seed: 1), big = testBytes(50_000, seed: 2)
            try storage.save(key: "small", value: small, filename: type == .mixed ? nil : "f-small", extendedData: Data([7]))
            try storage.save(key: "big", value: big, filename: "f-big")
            try storage.save(key: "empty", value: Data(), filename: "f-empty")
            let item = try XCTUnwrap(storage.item(forKey: "small"))
            XCTAssertEqual(item.value, small)
            XCTAssertEqual(item.extendedData, Data([7]))
            XCTAssertEqual(item.size, 100)
            XCTAssertEqual(item.filename, type == .file ? "f-small" : nil)
            XCTAssertEqual(try storage.itemValue(forKey: "big"), big)
            XCTAssertEqual(try storage.itemValue(forKey: "empty"), Data())
            XCTAssertEqual(try storage.itemInfo(forKey: "big")?.value, Data())
            XCTAssertEqual(try storage.itemInfo(forKey: "big")?.filename, type == .sqlite ? nil : "f-big")
            XCTAssertNil(try storage.item(forKey: "missing"))
            XCTAssertEqual(try storage.itemsCount(), 3)
            XCTAssertEqual(try storage.itemsSize(), 50_100)
            try assertConsistent(storage)
        }
    }

    func testFileStorageRequiresAFilenameAndRejectsBadOnes() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        XCTAssertThrowsError(try storage.save(key: "k", value: Data([1]))) { error in
            guard case KVCacheError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try storage.save(key: "k", value: Data([1]), filename: "../escape"))
        // The empty key is a key like any other.
        try storage.save(key: "", value: Data([1]), filename: "x")
        XCTAssertEqual(try storage.itemValue(forKey: ""), Data([1]))
        try assertConsistent(storage)
    }

    /// Overwriting a file value writes beside the old file and trashes the old one only after the row moved.
    func testOverwriteAlternatesFileNamesAndTrashesTheOldFile() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "k", value: testBytes(10, seed: 1), filename: "name")
        try storage.save(key: "k", value: testBytes(20, seed: 2), filename: "name")
        XCTAssertEqual(try storage.itemInfo(forKey: "k")?.filename, "name.1")
        XCTAssertEqual(try directory.files(in: "data"), ["name.1"])
        XCTAssertEqual(try directory.files(in: "trash").count, 1)
        try storage.save(key: "k", value: testBytes(30, seed: 3), filename: "name")
        XCTAssertEqual(try storage.itemInfo(forKey: "k")?.filename, "name")
        XCTAssertEqual(try storage.itemValue(forKey: "k"), testBytes(30, seed: 3))
        // File → inline in mixed mode: the file goes.
        let mixed = try KVStorage(path: directory.path + "/m", type: .mixed)
        try mixed.save(key: "k", value: testBytes(30, seed: 3), filename: "name")
        try mixed.save(key: "k", value: testBytes(5, seed: 4))
        XCTAssertEqual(try mixed.itemValue(forKey: "k"), testBytes(5, seed: 4))
        XCTAssertEqual(try directory.files(in: "m/data"), [])
        try assertConsistent(storage)
        try assertConsistent(mixed)
        XCTAssertEqual(try KVStorage.emptyTrash(atPath: directory.path), 2)
        XCTAssertEqual(try directory.files(in: "trash"), [])
    }

    func testRemoveByKeyKeysSizeTimeAndExtendedData() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<10 {
            try storage.save(key: "k\(i)", value: testBytes(i * 1_000, seed: i), filename: i % 2 == 0 ? "f\(i)" : nil)
        }
        XCTAssertTrue(try storage.setExtendedData(Data([9]), forKey: "k3"))
        XCTAssertFalse(try storage.setExtendedData(Data([9]), forKey: "nope"))
        XCTAssertEqual(try storage.itemInfo(forKey: "k3")?.extendedData, Data([9]))
        try storage.removeItem(forKey: "k0")
        try storage.removeItems(forKeys: ["k1", "k2", "nope"])
        XCTAssertFalse(try storage.containsItem(forKey: "k2"))
        XCTAssertTrue(try storage.containsItem(forKey: "k3"))
        try storage.removeItems(largerThan: 7_000)
        XCTAssertEqual(try storage.itemsCount(), 5) // k3…k7
        try storage.removeItems(earlierThan: Date(timeIntervalSinceNow: -3_600))
        XCTAssertEqual(try storage.itemsCount(), 5)
        try storage.removeItems(earlierThan: Date(timeIntervalSinceNow: 1))
        XCTAssertEqual(try storage.itemsCount(), 0)
        try assertConsistent(storage)
    }

    func testFitCountAndSizeEvictLeastRecentlyAccessed() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<6 { try storage.save(key: "k\(i)", value: testBytes(100, seed: i), filename: i % 2 == 0 ? "f\(i)" : nil) }
        _ = try storage.item(forKey: "k0") // k0 becomes the most recent
        try storage.removeItems(toFitCount: 4)
        XCTAssertEqual(try ["k0", "k1", "k2", "k3", "k4", "k5"].filter { try storage.containsItem(forKey: $0) },
                       ["k0", "k3", "k4", "k5"])
        // Costs (schema 3): k0 and k4 are files (4 KiB blocks), k3 and k5 inline; k3 then k4 are the oldest.
        let file = KVStorage.cost(keyBytes: 2, valueBytes: 100, isFile: true, extendedDataBytes: 0)
        let inline = KVStorage.cost(keyBytes: 2, valueBytes: 100, isFile: false, extendedDataBytes: 0)
        try storage.removeItems(toFitSize: file + inline)
        XCTAssertEqual(try ["k0", "k3", "k4", "k5"].filter { try storage.containsItem(forKey: $0) }, ["k0", "k5"])
        try assertConsistent(storage)
    }

    func testRemoveAllReportsProgress() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<150 { try storage.save(key: "k\(i)", value: testBytes(10, seed: i), filename: i % 3 == 0 ? "f\(i)" : nil) }
        var reports: [(Int, Int)] = []
        try storage.removeAllItems { reports.append(($0, $1)) }
        XCTAssertEqual(reports.map(\.0), [64, 128, 150])
        XCTAssertTrue(reports.allSatisfy { $0.1 == 150 })
        XCTAssertEqual(try storage.itemsCount(), 0)
        try assertConsistent(storage)
    }

    func testReopenKeepsEverythingAndAccessTimesPersist() throws {
        var storage: KVStorage? = try KVStorage(path: directory.path, type: .mixed)
        try storage?.save(key: "a", value: testBytes(10, seed: 1), filename: "fa")
        try storage?.save(key: "b", value: testBytes(10, seed: 2))
        _ = try storage?.item(forKey: "a")
        storage?.close()
        storage = nil
        let reopened = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertNil(reopened.recoveryError)
        XCTAssertEqual(try reopened.itemValue(forKey: "a"), testBytes(10, seed: 1))
        try reopened.removeItems(toFitCount: 1)
        XCTAssertTrue(try reopened.containsItem(forKey: "a"))
        try assertConsistent(reopened)
    }

    func testValueFileWithWrongSizeIsReportedAsMissAndRemoved() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "k", value: testBytes(100, seed: 1), filename: "f")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory.path + "/data/f"))
        XCTAssertNil(try storage.item(forKey: "k"))
        XCTAssertFalse(try storage.containsItem(forKey: "k"))
        try assertConsistent(storage)
    }
}
