@testable import KVCache
import Foundation
import XCTest

/// Review (defect): a value file name may be any name the file system takes (255 bytes on Linux); the docs
/// refuse only empty names, `.`, `..`, `/` and NUL. A replace writes its new file beside the old one under
/// the first of `<name>.1`, `<name>.2`, … that no row uses (`freeFilename`), which for a name of 254 or 255
/// bytes is longer than `NAME_MAX`: the rename into `data/` fails with `ENAMETOOLONG`, so the first save of
/// such a key succeeds and every later save of it throws — the key keeps its first value for good (and a
/// `DiskCache` whose `filename` closure gives such names can store each of those keys exactly once).
final class KVCacheLongFilenameReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testAValueWithAFilenameOfNameMaxBytesCanBeReplaced() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        defer { storage.close() }
        let name = String(repeating: "n", count: 255) // NAME_MAX: a legal file name
        let first = testBytes(3_000, seed: 1), second = testBytes(4_000, seed: 2)
        try storage.save(key: "k", value: first, filename: name)
        XCTAssertEqual(try storage.itemValue(forKey: "k"), first)
        do {
            try storage.save(key: "k", value: second, filename: name)
        } catch {
            XCTFail("replacing the value of a key whose file name is 255 bytes failed: \(error)")
        }
        XCTAssertEqual(try storage.itemValue(forKey: "k"), second, "the key kept its first value")
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    func testADiskCacheWhoseFilenameClosureGivesLongNamesCanReplaceValues() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 16)
        // e.g. files named after a 254-byte key (no `/`): unique per key, legal names.
        cache.filename = { key in key }
        let key = String(repeating: "k", count: 254)
        try cache.setObject(testBytes(2_000, seed: 3), forKey: key)
        let replacement = testBytes(2_500, seed: 4)
        do {
            try cache.setObject(replacement, forKey: key)
        } catch {
            XCTFail("replacing the value failed: \(error)")
        }
        XCTAssertEqual(try cache.object(forKey: key), replacement)
    }
}
