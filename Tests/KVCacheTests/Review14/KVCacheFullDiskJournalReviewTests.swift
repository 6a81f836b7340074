@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (defect): on a full disk a `pwrite` of intent-journal records can stop part-way (the file's last
/// page is full and no new one can be had) before the next one fails with ENOSPC. `journal` then threw, but
/// the part it had written stayed in the journal when the scope's first append failed (`endJournalScope`
/// truncates only when records were appended): a torn record, as if a writer had been killed inside its
/// write. A transient ENOSPC on one removal thus made the next exclusive open scan every row and file, and
/// until then every cleanup beside live instances skipped the journal, so what dead writers left stayed.
/// Real disk full: a 2 MB tmpfs (mounted by the test; skipped where mounting is not allowed), the journal
/// holding a dead writer's records up to 6 bytes short of a page. Before the fix the journal read
/// `[…, ""]` (a full-scan request) after the failed removal.
final class KVCacheFullDiskJournalReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var mounted = false

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("kvcache-full-disk-journal")
        guard "size=2m".withCString({ Glibc.mount("tmpfs", directory.path, "tmpfs", 0, $0) }) == 0 else {
            throw XCTSkip("cannot mount a tmpfs here (errno \(errno)): needs root")
        }
        mounted = true
    }

    override func tearDownWithError() throws {
        if mounted { _ = Glibc.umount2(directory.path, Int32(MNT_DETACH)) }
        try directory.remove()
    }

    func testAJournalAppendCutShortByAFullDiskLeavesNoTornRecord() throws {
        let path = directory.path + "/store"
        let storage = try KVStorage(path: path, type: .file)
        defer { storage.close() }
        try storage.save(key: "k", value: testBytes(3_000, seed: 1), filename: "k")
        // A dead writer's records (kept, as after a kill): 4,090 bytes, 6 short of the journal's first page.
        var names: [String] = []
        var size = 0
        while 4_090 - size > 300 {
            let name = "dead-\(names.count)-" + String(repeating: "d", count: 180)
            names.append(name)
            size += KVStorage.journalRecord(name).count
        }
        // The last record fills the rest exactly: "<length> <name> <8 hex>\n".
        let rest = 4_090 - size
        names.append(String(repeating: "z", count: rest - 14 >= 100 ? rest - 14 : rest - 13))
        try storage.withFileLock { () throws(KVCacheError) in
            storage.keepJournal()
            try storage.journal(names)
        }
        let journal = try FileManager.default.attributesOfItem(atPath: path + "/write.lock")
        XCTAssertEqual((journal[.size] as? NSNumber)?.intValue, 4_090)

        // Given: the disk full.
        let filler = open(directory.path + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(filler, 0)
        let chunk = [UInt8](repeating: 1, count: 4_096)
        while write(filler, chunk, chunk.count) > 0 {}
        XCTAssertEqual(errno, ENOSPC)
        Glibc.close(filler)

        // When: a removal journals the name its row stops using, across the page boundary.
        do throws(KVCacheError) {
            try storage.removeItem(forKey: "k")
            XCTFail("the removal journaled its name on a full disk")
        } catch {
            guard case .io(let code, _, _) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(code, ENOSPC)
        }
        XCTAssertEqual(unlink(directory.path + "/filler"), 0)

        // Then: the journal holds the dead writer's records, well formed, and nothing torn.
        let read = try storage.withFileLock { () throws(KVCacheError) -> [String] in
            storage.keepJournal()
            return try storage.journaledNames()
        }
        XCTAssertFalse(read.contains(""), "a torn record: the next cleanup scans the whole store")
        XCTAssertTrue(read == names, "the dead writer's records: \(read.count) names read, \(names.count) written")
        XCTAssertEqual(try storage.itemValue(forKey: "k"), testBytes(3_000, seed: 1), "the failed removal changed nothing")
        // A visitor beside this instance works the dead writer's records off.
        let visitor = try KVStorage(path: path, type: .file)
        XCTAssertTrue(try visitor.journalIsEmpty(), "the cleanup beside live instances skipped the journal")
        visitor.close()
    }
}
