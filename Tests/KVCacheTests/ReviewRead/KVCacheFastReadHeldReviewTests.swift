@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review of 6b8dd52 (the value read's fast path and borrowed key binding): attacks that held.
final class KVCacheFastReadHeldReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// The fast path still begins/renews the snapshot: another instance's commits (inline → inline, inline →
    /// file, file → inline, removal) are seen by the next `itemValue` and `containsItem` of a reader whose
    /// snapshot is open.
    func testTheFastPathSeesAnotherInstancesCommits() throws {
        let reader = try KVStorage(path: directory.path, type: .mixed)
        defer { reader.close() }
        let writer = try KVStorage(path: directory.path, type: .mixed)
        defer { writer.close() }
        try writer.save(key: "k", value: Data([1]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([1]))
        XCTAssertTrue(reader.hasReadSnapshot)
        try writer.save(key: "k", value: Data([2]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([2]))
        let big = Data(repeating: 9, count: 30_000)
        try writer.save(key: "k", value: big, filename: "f1")
        XCTAssertEqual(try reader.itemValue(forKey: "k"), big)
        try writer.removeItem(forKey: "k")
        try writer.save(key: "k", value: Data([4]))
        XCTAssertEqual(try reader.itemValue(forKey: "k"), Data([4]))
        try writer.save(key: "k", value: big + Data([5]), filename: "f2")
        XCTAssertEqual(try reader.itemValue(forKey: "k"), big + Data([5]))
        try writer.removeItem(forKey: "k")
        XCTAssertNil(try reader.itemValue(forKey: "k"))
        XCTAssertFalse(try reader.containsItem(forKey: "k"))
    }

    /// A corruption code from the fast path's step is typed, runs recovery, loses nothing, and leaves the
    /// statements usable (no binding left behind).
    func testACorruptionErrorFromTheFastPathRecoversAndLosesNothing() throws {
        let faults = KVStorageFaults()
        let storage = try KVStorage(path: directory.path, type: .mixed, faults: faults)
        defer { storage.close() }
        for i in 0..<20 { try storage.save(key: "k\(i)", value: Data([UInt8(i)])) }
        try storage.save(key: "file", value: Data(repeating: 1, count: 20_000), filename: "ff")
        for (call, key) in [(1, "k3"), (1, "file"), (2, "file")] {
            faults.fail(.sqliteStep, onCall: call, sqliteCode: 11) // SQLITE_CORRUPT
            do {
                _ = try storage.itemValue(forKey: key)
                XCTFail("no error for \(key), call \(call)")
            } catch {
                guard case .sqlite(let code, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(code & 0xFF, 11)
            }
            faults.disarm()
        }
        for i in 0..<20 { XCTAssertEqual(try storage.itemValue(forKey: "k\(i)"), Data([UInt8(i)])) }
        XCTAssertEqual(try storage.itemValue(forKey: "file"), Data(repeating: 1, count: 20_000))
        XCTAssertEqual(try storage.itemsCount(), 21)
        for hot in [HotStatement.selectValue, .containsKey] {
            let select = try storage.database.prepare(hot)
            defer { select.reset() }
            XCTAssertFalse(try select.step(), "\(hot) kept its key bound")
        }
    }

    /// Small (≤ 15 bytes, stored in the `String` itself), 16-byte, empty, NUL-holding and substring-built keys
    /// through the fast path and `containsItem`: each finds exactly its own row; a prefix or NUL-cut never matches.
    func testSmallEmptyAndNULKeysThroughTheBorrowedBinding() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        let long = "0123456789abcdefXYZ"
        let keys = ["", "\0", "a", "a\0", "a\0b", String(long.prefix(15)), String(long.prefix(16)),
                    String(long.dropFirst(3)), "\u{E9}", "e\u{301}"]
        for (i, key) in keys.enumerated() { try storage.save(key: key, value: Data([UInt8(i)])) }
        for (i, key) in keys.enumerated() {
            var copy = key
            copy += "" // a different instance of the same bytes
            XCTAssertEqual(try storage.itemValue(forKey: copy), Data([UInt8(i)]), "key #\(i)")
            XCTAssertTrue(try storage.containsItem(forKey: copy), "key #\(i)")
        }
        for absent in ["\0\0", "a\0c", String(long.prefix(14)), "b"] {
            XCTAssertNil(try storage.itemValue(forKey: absent))
            XCTAssertFalse(try storage.containsItem(forKey: absent))
        }
    }

    /// Within one instance, reads (coarse) and writes (precise) interleaved inside one tick keep LRU order.
    func testReadsAndWritesOfOneInstanceKeepLRUOrder() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        for key in ["a", "b", "c", "d", "e"] { try storage.save(key: key, value: Data(key.utf8)) }
        _ = try storage.itemValue(forKey: "a")
        try storage.save(key: "b", value: Data([2]))
        _ = try storage.itemValue(forKey: "c")
        try storage.save(key: "d", value: Data([4]))
        _ = try storage.itemValue(forKey: "e")
        try storage.removeItems(toFitCount: 3)
        XCTAssertNil(try storage.itemInfo(forKey: "a"))
        XCTAssertNil(try storage.itemInfo(forKey: "b"))
        for key in ["c", "d", "e"] { XCTAssertNotNil(try storage.itemInfo(forKey: key), key) }
    }
}
