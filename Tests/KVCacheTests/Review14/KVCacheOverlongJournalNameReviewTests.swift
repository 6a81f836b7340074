@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (defect): a value file name longer than `NAME_MAX` (255 bytes) passes `isSafeFilename` (a
/// `DiskCache` whose `filename` closure returns the key, and a key that is a long URL, gives one): `save`
/// journals the name, then the rename into `data/` fails with ENAMETOOLONG. A writer killed between that
/// journal record and the rename (or a scope whose records are kept because a move failed) leaves the name in
/// the intent journal, and the cleanup asked `stat` about `data/<name>`, which fails with ENAMETOOLONG: the
/// cleanup threw, so every exclusive open of the store threw — for good (the record is dropped only by a
/// cleanup that completes) — and every cleanup beside other instances failed and left it there. Before the
/// fix: both opens below threw `.io(ENAMETOOLONG, "stat")`. No file can have such a name: nothing to clean.
final class KVCacheOverlongJournalNameReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-overlong-journal-name") }
    override func tearDownWithError() throws { try directory.remove() }

    func testAJournaledNameNoFileCanHaveNeverBlocksTheCleanup() throws {
        let long = String(repeating: "u", count: 300)
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "kept", value: testBytes(3_000, seed: 1), filename: "kept")
        // The save of such a name fails at its rename into data/…
        XCTAssertThrowsError(try storage.save(key: long, value: testBytes(2_000, seed: 2), filename: long))
        // …after its record went to the journal; a scope whose records stay (a failed move, or a kill before
        // the rename) leaves it there.
        try storage.withFileLock { () throws(KVCacheError) in
            storage.keepJournal()
            try storage.journal([long])
        }
        XCTAssertFalse(try storage.journalIsEmpty())

        // Beside this instance: the cleanup works the record off.
        let visitor = try KVStorage(path: directory.path, type: .file)
        XCTAssertTrue(try visitor.journalIsEmpty(), "the cleanup beside other instances failed on the record")
        visitor.close()
        try storage.withFileLock { () throws(KVCacheError) in
            storage.keepJournal()
            try storage.journal([long])
        }
        storage.close()

        // Alone: the exclusive opener's cleanup, twice (the second opener finds what the first left).
        for round in 1...2 {
            do {
                let reopened = try KVStorage(path: directory.path, type: .file)
                defer { reopened.close() }
                XCTAssertEqual(reopened.openReport.ranCrashCleanup, round == 1, "round \(round)")
                XCTAssertTrue(try reopened.journalIsEmpty(), "round \(round)")
                XCTAssertEqual(try reopened.itemValue(forKey: "kept"), testBytes(3_000, seed: 1))
                XCTAssertEqual(try reopened._checkInvariants(), [])
            } catch {
                XCTFail("round \(round): the store cannot be opened alone: \(error)")
            }
        }
    }
}
