@testable import KVCache
import Foundation
import XCTest

/// Review (defect): file names are bytes to the file system, to the manifest (BINARY collation) and to the
/// cleanup (`ExactKey`), but `placeAndCommit` decides whether the replaced file goes to trash with Swift's
/// `String !=` (`if let previous, previous != placed`), which is canonical equivalence. When a key's new file
/// name is canonically equal to its old one but differs as bytes (`"café"` composed, then decomposed — a
/// `filename` closure changed between versions of an app, or names built from text normalised elsewhere),
/// the row moves to the new file and the old one is left in `data/` with no row: an orphan outside every
/// total and trim, that no clean open, no crash cleanup (its name was journaled, then the scope ended) and no
/// trim ever removes — only a full scan after a reboot.
final class KVCacheCanonicalFilenameOrphanReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testReplacingAFileWithACanonicallyEqualNameTrashesTheOldFile() throws {
        let composed = "caf\u{E9}.jpg", decomposed = "cafe\u{301}.jpg"
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8))
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "k", value: testBytes(50_000, seed: 1), filename: composed)
        let replacement = testBytes(60_000, seed: 2)
        try storage.save(key: "k", value: replacement, filename: decomposed)
        XCTAssertEqual(try storage.itemValue(forKey: "k"), replacement)
        XCTAssertEqual(try storage._checkInvariants(), [], "the replaced file is left in data/ with no row")
        storage.close()

        // Not collected by the next (exclusive, clean) open either.
        let reopened = try KVStorage(path: directory.path, type: .file)
        defer { reopened.close() }
        XCTAssertEqual(try reopened._checkInvariants(), [], "still an orphan after a clean reopen")
    }
}
