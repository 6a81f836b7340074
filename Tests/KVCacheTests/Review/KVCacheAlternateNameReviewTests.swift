@testable import KVCache
import Foundation
import XCTest

/// Review (defect): a replaced value is written beside the old one as `<filename>.1` (and back), so the old
/// file stays valid until the row moves (`placeAndCommit`). That name is not reserved: the `filename`
/// contract is only "unique per key, no `/`", and a caller's closure may well give one key `x` and another
/// `x.1` (here: files named after their keys, `photo` and `photo.1`). Replacing `photo` then renames its
/// new file over `photo.1`'s — under `write.lock` and in the write transaction, but nothing checks that
/// another row uses the target. The other key silently reads this key's bytes (same size), or, with another
/// size, is removed as damaged at its next read: an acknowledged value lost without any crash.
final class KVCacheAlternateNameReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testReplacingAValueNeverTakesAnotherKeysFile() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 16)
        cache.filename = { key in key }
        let other = Data(repeating: 0x11, count: 4_000)
        try cache.setObject(other, forKey: "photo.1")
        try cache.setObject(Data(repeating: 0x22, count: 4_000), forKey: "photo")
        let replacement = Data(repeating: 0x33, count: 4_000)
        try cache.setObject(replacement, forKey: "photo") // written as "photo.1"
        XCTAssertEqual(try cache.object(forKey: "photo"), replacement)
        XCTAssertEqual(try cache.object(forKey: "photo.1"), other,
                       "key \"photo.1\" reads key \"photo\"'s replacement; data/ holds \((try? directory.files(in: "data")) ?? [])")
    }

    /// The same at the storage level, with sizes that differ: the other key's row no longer matches its file.
    func testReplacingAValueKeepsAnotherKeyWhoseNameIsTheAlternate() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        defer { storage.close() }
        let other = Data(repeating: 0x44, count: 3_000)
        try storage.save(key: "b", value: other, filename: "x.1")
        try storage.save(key: "a", value: Data(repeating: 0x55, count: 1_000), filename: "x")
        try storage.save(key: "a", value: Data(repeating: 0x66, count: 2_000), filename: "x")
        XCTAssertEqual(try storage.itemValue(forKey: "b"), other, "key \"b\" (file x.1) was lost to the replacement of \"a\" (file x)")
        XCTAssertEqual(try storage._checkInvariants(), [])
    }
}
