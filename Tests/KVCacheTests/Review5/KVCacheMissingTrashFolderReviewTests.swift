@testable import KVCache
import Foundation
import XCTest

/// Review (defect): `moveToTrash` renames `data/<name>` to `trash/…` and, when the rename fails with `ENOENT`,
/// returns as if the file were already gone. But `rename(2)` also reports `ENOENT` when the *target's* folder
/// is missing: with `trash/` removed while the store is open (it is named "trash": an operator freeing disk
/// space with `rm -rf <cache>/trash`, a tmp cleaner), every removed, replaced or trimmed value's file stays in
/// `data/` with no row — not unlinked, not journaled (`keepJournal` is skipped), outside `totalCost()`, so
/// trims free nothing on disk — and no clean open or crash cleanup ever finds it (only a full scan after a
/// reboot). The store's disk use grows without bound while its totals say it shrinks.
final class KVCacheMissingTrashFolderReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testRemovalsAndReplacesFreeTheirFilesWhenTrashWasRemoved() throws {
        let storage = try KVStorage(path: directory.path, type: .file)
        try storage.save(key: "removed", value: testBytes(40_000, seed: 1), filename: "removed")
        try storage.save(key: "replaced", value: testBytes(40_000, seed: 2), filename: "replaced")
        for key in 0..<8 { try storage.save(key: "old-\(key)", value: testBytes(40_000, seed: 10 + key), filename: "old-\(key)") }
        try FileManager.default.removeItem(atPath: directory.path + "/trash")

        try storage.removeItem(forKey: "removed")
        try storage.save(key: "replaced", value: testBytes(30_000, seed: 3), filename: "replaced")
        try storage.removeItems(toFitCount: 1) // trims the 8 "old-" entries and "removed"'s neighbours
        XCTAssertEqual(try storage.itemsCount(), 1)
        XCTAssertEqual(try storage._checkInvariants(), [], "files of removed rows left in data/: \((try? directory.files(in: "data")) ?? [])")
        storage.close()

        let reopened = try KVStorage(path: directory.path, type: .file)
        defer { reopened.close() }
        XCTAssertEqual(try reopened._checkInvariants(), [], "still orphans after a clean reopen: \((try? directory.files(in: "data")) ?? [])")
    }
}
