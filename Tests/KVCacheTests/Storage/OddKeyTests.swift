@testable import KVCache
import Foundation
import XCTest

/// Keys are bytes: the empty key, NUL inside and at the end, 100 KB keys, every Unicode plane, and keys
/// equal after Unicode normalisation but different as bytes are stored, read, trimmed and removed exactly.
final class OddKeyTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// The odd keys; every pair of them differs as bytes.
    static let oddKeys: [String] = {
        var keys = ["", "\0", "a\0b", "a\0c", "abc\0", "abc", "\0\0\0"]
        keys.append(String(repeating: "k", count: 100_000))
        keys.append(String(repeating: "k", count: 99_999) + "\0")
        // One scalar from each plane in use (BMP, SMP, SIP, TIP, SSP, the private-use planes).
        keys += ["\u{7F}\u{FFFD}", "\u{1F600}", "\u{20000}", "\u{30000}", "\u{E0001}", "\u{F0000}", "\u{10FFFD}"]
        // Canonically equivalent (Swift's == says equal), different bytes.
        keys += ["\u{E9}", "e\u{301}", "\u{212B}", "\u{C5}", "A\u{30A}", "q\u{307}\u{323}", "q\u{323}\u{307}",
                 "\u{1E69}", "s\u{323}\u{307}"]
        return keys
    }()

    /// The index of `key` in `oddKeys`, by bytes (`firstIndex(of:)` would take a canonically equal one).
    static func index(of key: String) -> Int { oddKeys.firstIndex { Array($0.utf8) == Array(key.utf8) }! }

    func testOddKeysAreDistinctAsBytes() {
        for (i, a) in Self.oddKeys.enumerated() {
            for b in Self.oddKeys[(i + 1)...] { XCTAssertFalse(Array(a.utf8) == Array(b.utf8)) }
        }
        XCTAssertEqual("\u{E9}", "e\u{301}") // why byte-wise comparison is needed
    }

    private static func value(_ index: Int) -> Data { testBytes(index % 2 == 0 ? 50 + index : 25_000 + index, seed: index) }

    func testKVStorageStoresReadsAndRemovesOddKeysExactly() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for (i, key) in Self.oddKeys.enumerated() {
            let value = Self.value(i)
            try storage.save(key: key, value: value, filename: value.count > 1_000 ? "f\(i)" : nil, extendedData: Data([UInt8(i)]))
        }
        XCTAssertEqual(try storage.itemsCount(), Self.oddKeys.count)
        for (i, key) in Self.oddKeys.enumerated() {
            let item = try XCTUnwrap(storage.item(forKey: key), "key #\(i)")
            XCTAssertEqual(Array(item.key.utf8), Array(key.utf8), "key #\(i)")
            XCTAssertEqual(item.value, Self.value(i), "key #\(i)")
            XCTAssertEqual(item.extendedData, Data([UInt8(i)]), "key #\(i)")
        }
        // Removing one of a canonically-equal pair leaves the other.
        let e = Self.index(of: "\u{E9}")
        try storage.removeItem(forKey: Self.oddKeys[e])
        XCTAssertNil(try storage.itemValue(forKey: Self.oddKeys[e]))
        XCTAssertEqual(try storage.itemValue(forKey: "e\u{301}"), Self.value(e + 1))
        XCTAssertEqual(try storage._checkInvariants(), [])
        storage.close()
        // And after reopening (open-time cleanup reads every file row back).
        let reopened = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertNil(reopened.recoveryError)
        for (i, key) in Self.oddKeys.enumerated() where i != e {
            XCTAssertEqual(try reopened.itemValue(forKey: key), Self.value(i), "key #\(i)")
        }
    }

    /// The reviewer's case: 32 old keys holding NUL, then 8 new ones; trimming to 8 keeps exactly the new.
    func testTrimRemovesNULKeysAndKeepsTheNewest() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for i in 0..<32 { try storage.save(key: "old\0\(i)", value: testBytes(100, seed: i), filename: i % 2 == 0 ? "o\(i)" : nil) }
        for i in 0..<8 { try storage.save(key: "new-\(i)", value: testBytes(100, seed: 100 + i)) }
        try storage.removeItems(toFitCount: 8)
        XCTAssertNil(storage.recoveryError)
        XCTAssertEqual(try storage.itemsCount(), 8)
        for i in 0..<8 { XCTAssertEqual(try storage.itemValue(forKey: "new-\(i)"), testBytes(100, seed: 100 + i)) }
        for i in 0..<32 { XCTAssertNil(try storage.itemValue(forKey: "old\0\(i)")) }
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    func testDiskCacheTrimsOddKeysOldestFirstAndLeavesTheRest() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        cache.keyLengthLimit = 100_000 // the 100 KB keys, over the 8 KiB default (KVCacheKeyCostTests), allowed here
        for (i, key) in Self.oddKeys.enumerated() { try cache.setObject(Self.value(i), forKey: key) }
        let keep = 5
        try cache.trim(toCount: keep)
        XCTAssertNil(cache.recoveryError)
        XCTAssertEqual(try cache.totalCount(), keep)
        for (i, key) in Self.oddKeys.enumerated() {
            let expected = i >= Self.oddKeys.count - keep ? Self.value(i) : nil
            XCTAssertEqual(try cache.object(forKey: key), expected, "key #\(i)")
        }
        XCTAssertEqual(Set(try cache.allKeys().map { Array($0.utf8) }), Set(Self.oddKeys.suffix(keep).map { Array($0.utf8) }))
        try cache.removeAllObjects()
        XCTAssertEqual(try cache.totalCount(), 0)
    }

    /// The memory layer keeps canonically-equal keys apart too (it would otherwise serve one key's value
    /// for the other, while the disk keeps them apart).
    func testMemoryCacheAndCacheKeepCanonicallyEqualKeysApart() throws {
        let memory = MemoryCache<String, Int>()
        for (i, key) in Self.oddKeys.enumerated() { memory.setObject(i, forKey: key) }
        XCTAssertEqual(memory.totalCount, Self.oddKeys.count)
        for (i, key) in Self.oddKeys.enumerated() { XCTAssertEqual(memory.object(forKey: key), i, "key #\(i)") }
        memory.removeObject(forKey: "\u{E9}")
        XCTAssertEqual(memory.object(forKey: "e\u{301}"), Self.index(of: "e\u{301}"))

        let cache = try Cache<Data>(path: directory.path, inlineThreshold: 1_000)
        try cache.setObject(Data([1]), forKey: "\u{E9}")
        try cache.setObject(Data([2]), forKey: "e\u{301}")
        XCTAssertEqual(try cache.object(forKey: "\u{E9}"), Data([1]))
        XCTAssertEqual(try cache.object(forKey: "e\u{301}"), Data([2]))
        cache.memoryCache.removeAllObjects()
        XCTAssertEqual(try cache.object(forKey: "\u{E9}"), Data([1]))
        XCTAssertEqual(try cache.object(forKey: "e\u{301}"), Data([2]))
    }
}
