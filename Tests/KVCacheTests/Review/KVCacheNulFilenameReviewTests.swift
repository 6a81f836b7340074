@testable import KVCache
import Foundation
import XCTest

/// Review (defect): a value file name holding NUL is accepted (`isSafeFilename` checks `/`, `.`, `..` and
/// emptiness only) and handed to `rename(2)`/`open(2)`, which stop at the NUL: `"v\0one"` and `"v\0two"` both
/// name `data/v`. The second save renames its temporary over the first key's file, so the first key
/// silently reads the second key's bytes (same size) — an acknowledged value does not read back intact —
/// and the crash cleanup compares rows by their full names with a directory holding only the truncated one.
/// `DiskCache`'s filename closure passes any name through, so any bytes a caller derives a name from reach
/// here. Expected: the save throws `.invalidArgument`, or both values read back intact.
final class KVCacheNulFilenameReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testFilenamesThatDifferAfterANulDoNotShareAFile() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        defer { storage.close() }
        let one = Data(repeating: 1, count: 100), two = Data(repeating: 2, count: 100)
        let before = Data(repeating: 9, count: 100)
        try storage.save(key: "one", value: before, filename: "one-before")
        let first = Result { () throws(KVCacheError) in
            try storage.save(key: "one", value: one, filename: "v\u{0}one")
        }
        let second = Result { () throws(KVCacheError) in
            try storage.save(key: "two", value: two, filename: "v\u{0}two")
        }
        if case .failure(let error) = first {
            // Refusing the names is a fine answer if it is `.invalidArgument` (for both: the same rule) and
            // nothing stored changed.
            guard case .invalidArgument = error else { return XCTFail("unexpected error \(error)") }
            guard case .failure(.invalidArgument) = second else { return XCTFail("only the first NUL name was refused: \(second)") }
            XCTAssertEqual(try storage.itemValue(forKey: "one"), before)
            XCTAssertNil(try storage.itemValue(forKey: "two"))
            XCTAssertEqual(try storage._checkInvariants(), [])
            return
        }
        if case .failure(let error) = second {
            // Refusing the name is a fine answer if it is `.invalidArgument` and nothing stored changed.
            guard case .invalidArgument = error else { return XCTFail("unexpected error \(error)") }
            XCTAssertEqual(try storage.itemValue(forKey: "one"), one)
            return
        }
        XCTAssertEqual(try storage.itemValue(forKey: "two"), two)
        XCTAssertEqual(try storage.itemValue(forKey: "one"), one,
                       "key \"one\" (file \"v\\0one\") reads key \"two\"'s bytes: both files are data/v; data/ holds \((try? directory.files(in: "data")) ?? [])")
        XCTAssertEqual(try storage._checkInvariants(), [])
    }

    /// The same through the public API: a `DiskCache` whose `filename` closure names each file after its key
    /// (unique per key, no `/`: the documented contract), with two keys that differ after a NUL — distinct
    /// entries by the README ("keys holding NUL … are distinct entries, on disk").
    func testADiskCacheNamingFilesAfterKeysKeepsNulKeysApart() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 16)
        cache.filename = { key in key }
        let first = Data(repeating: 0xA1, count: 64), second = Data(repeating: 0xB2, count: 64)
        // Refusing the names is a fine answer too (the class's "Expected"), if it is `.invalidArgument` for both
        // and nothing is stored under either key.
        let saves = [("image\u{0}small", first), ("image\u{0}large", second)].map { key, value in
            Result { () throws(KVCacheError) in try cache.setObject(value, forKey: key) }
        }
        let refused = saves.filter { if case .failure(.invalidArgument) = $0 { true } else { false } }.count
        if refused > 0 {
            XCTAssertEqual(refused, 2, "one NUL name refused, the other not: \(saves)")
            XCTAssertNil(try cache.object(forKey: "image\u{0}small"))
            XCTAssertNil(try cache.object(forKey: "image\u{0}large"))
            return
        }
        try saves[0].get()
        try saves[1].get()
        XCTAssertEqual(try cache.object(forKey: "image\u{0}large"), second)
        XCTAssertEqual(try cache.object(forKey: "image\u{0}small"), first,
                       "the first key reads the second key's bytes; data/ holds \((try? directory.files(in: "data")) ?? [])")
    }
}
