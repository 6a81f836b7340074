@testable import KVCache
import Foundation
import XCTest

/// Inputs found by the FuzzKVStorage fuzzer (Fuzz/), kept as regression tests.
final class DamagedManifestRegressionTests: XCTestCase {
    /// The manifest of fuzzer input `timeout-fa4170f6…`: a valid store of keys k1…k4 in which one byte of
    /// the table changed `k4` into a second `k2`. The primary-key index still says `k4`, so
    /// `DELETE … WHERE key = 'k2'` never finds that row, and `PRAGMA quick_check` (which does not compare
    /// indexes with their table) passes. `removeAllItems` used to select the row, "delete" it and loop
    /// forever. Stored sparsely: (offset, base64 of the bytes there) over a zero-filled file of 16,384 bytes.
    static let duplicateKeyManifestRuns: [(offset: Int, base64: String)] = [
        (0, "U1FMaXRlIGZvcm1hdCAzABAAAgIAQCAgAAAAAgAAAAQ="),
        (43, "AgAAAAQ="),
        (59, "AQ=="),
        (95, "AgAuYwEND/gAAw5jAA7XD8cOYw=="),
        (3683, "cgMHFz8dAYEVaW5kZXhtYW5pZmVzdF9sYXN0X2FjY2Vzc190aW1lbWFuaWZlc3QEQ1JFQVRFIElOREVYIG1hbmlmZXN0X2xh" +
            "c3RfYWNjZXNzX3RpbWUgT04gbWFuaWZlc3QobGFzdF9hY2Nlc3NfdGltZSmBbQEHFx0dAYMtdGFibGVtYW5pZmVzdG1hbmlm" +
            "ZXN0AkNSRUFURSBUQUJMRSBtYW5pZmVzdCAoa2V5IFRFWFQgUFJJTUFSWSBLRVkgTk9UIE5VTEwsIGZpbGVuYW1lIFRFWFQs" +
            "IHNpemUgSU5URUdFUiBOT1QgTlVMTCwKICAgIGlubGluZV9kYXRhIEJMT0IsIG1vZGlmaWNhdGlvbl90aW1lIElOVEVHRVIg" +
            "Tk9UIE5VTEwsIGxhc3RfYWNjZXNzX3RpbWUgSU5URUdFUiBOT1QgTlVMTCwKICAgIGV4dGVuZGVkX2RhdGEgQkxPQikvAgYX" +
            "Qx0BAGluZGV4c3FsaXRlX2F1dG9pbmRleF9tYW5pZmVzdF8xbWFuaWZlc3QDAAAACAAAAAANAAAABA9sAA/fD8APiw9s"),
        (8044, "HQQIEREBAAYGAGsyZjNAAAZgw0UvP8wABmDDRS8/zDMDCBEAATQGBhRrMxQDAwMDAwMDAwMDAwMDAwMDAwMDAwAGYMNFLz+Z" +
            "AAZgw0UvQC5ldGFnHQIIEREBAAYGAGsyZjJAAAZgw0UvP1IABmDDRS8/Uh8BCBERAQAGBhBrMWYxQAAGYMNFLz6/AAZgw0Uv" +
            "Pr8JCQoAAAAED+UAD/oP8w/sD+U="),
        (12261, "BgMRAWs0BAYDEQFrMwMGAxEBazICBQMRCWsxCgAAAAQPzQAP9A/nD80P2g=="),
        (16333, "DAMGAQAGYMNFLz/MBAwDBgEABmDDRS9ALgMMAwYBAAZgw0UvP1ICCwMGCQAGYMNFLz6/"),
    ]

    static func duplicateKeyManifest() throws -> Data {
        var bytes = [UInt8](repeating: 0, count: 16_384)
        for run in duplicateKeyManifestRuns {
            let chunk = try XCTUnwrap(Data(base64Encoded: run.base64), "bad base64 at offset \(run.offset)")
            bytes.replaceSubrange(run.offset..<run.offset + chunk.count, with: chunk)
        }
        return Data(bytes)
    }

    func testRemoveAllItemsEndsWhenTheKeyIndexMissesARow() throws {
        // Given a store whose manifest has a row the key index cannot find
        let folder = try TemporaryDirectory()
        defer { XCTAssertNoThrow(try folder.remove()) }
        let store = folder.path + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try Self.duplicateKeyManifest().write(to: URL(fileURLWithPath: store + "/manifest.sqlite"))

        // When every item is removed (on another thread, so a regression fails the wait instead of hanging)
        let finished = expectation(description: "removeAllItems returned")
        let outcome = OutcomeBox()
        DispatchQueue.global().async {
            do {
                let storage = try KVStorage(path: store, type: .mixed)
                defer { storage.close() }
                // The damage is found by the open-time cleanup (the rows' files are missing: deleting them meets
                // the index) and repaired by this sole opener, or by removeAllItems.
                if let recovery = storage.recoveryError { outcome.set("recovered at open: \(recovery)") }
                do {
                    try storage.removeAllItems()
                } catch {
                    outcome.set("removeAllItems threw \(error)")
                }
                outcome.set("count after: \(try storage.itemsCount())")
            } catch {
                outcome.set("unexpected error \(error)")
            }
            finished.fulfill()
        }
        wait(for: [finished], timeout: 60)

        // Then it ended, the damage was reported, and the store is empty and usable
        XCTAssertEqual(outcome.messages.last, "count after: 0", "\(outcome.messages)")
        XCTAssertTrue(outcome.messages.first.map { $0.hasPrefix("removeAllItems threw") || $0.hasPrefix("recovered at open") } ?? false,
                      "\(outcome.messages)")
    }

    func testManifestFilenameOutsideTheFolderIsNeverReadOrRemoved() throws {
        // Given a store whose manifest names a file outside its folder (a damaged or hostile manifest)
        let folder = try TemporaryDirectory()
        defer { XCTAssertNoThrow(try folder.remove()) }
        let store = folder.path + "/store"
        let outside = folder.path + "/outside"
        let outsideBytes = Data("must survive".utf8)
        try outsideBytes.write(to: URL(fileURLWithPath: outside))
        do {
            let storage = try KVStorage(path: store, type: .mixed)
            defer { storage.close() }
            try storage.save(key: "k1", value: Data(repeating: 1, count: 64), filename: "f1")
            try storage.save(key: "k2", value: Data(repeating: 2, count: outsideBytes.count), filename: "f2")
            try storage.database.execute("UPDATE manifest SET filename = '../../outside'")
        }

        // When it is reopened (open-time cleanup), then such rows are read and removed
        let storage = try KVStorage(path: store, type: .mixed)
        defer { storage.close() }
        let survivedCleanup = FileManager.default.contents(atPath: outside) == outsideBytes
        try storage.save(key: "k1", value: Data(repeating: 1, count: 64), filename: "f1")
        try storage.save(key: "k2", value: Data(repeating: 2, count: outsideBytes.count), filename: "f2")
        try storage.database.execute("UPDATE manifest SET filename = '../../outside'")
        let read = try storage.item(forKey: "k2")
        try storage.removeAllItems()

        // Then the outside file was neither returned nor touched
        XCTAssertTrue(survivedCleanup)
        XCTAssertNil(read)
        XCTAssertEqual(try storage.itemsCount(), 0)
        XCTAssertEqual(FileManager.default.contents(atPath: outside), outsideBytes)
    }
}

/// Messages from the worker thread of a test. Thread-safe (a lock).
private final class OutcomeBox: Sendable {
    private let storage = Mutex<[String]>([])
    func set(_ message: String) { storage.withLock { $0.append(message) } }
    var messages: [String] { storage.withLock { $0 } }
}
