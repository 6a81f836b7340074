@testable import KVCache
import Foundation
import XCTest

/// Review (defect): the intent journal's reader (`journaledNames`) stops at the first malformed record and
/// drops everything after it, but a torn record is not necessarily the last one. A writer killed inside its
/// `pwrite` of the journal (a trim journals every name it deletes in one write; a fatal signal ends a
/// multi-page regular-file write part-way) leaves a torn record at the end; the writers that come after it
/// (other processes still open on the folder) append behind it (`beginJournalScope` starts at the file's
/// end), and one of them killed between placing its file in `data/` and its COMMIT leaves a well-formed
/// record behind the torn one. The next exclusive opener's cleanup never sees that name: the orphan stays in
/// `data/` for good ("after the cleanup no orphan file in data/" is broken; the store leaks the file until
/// a full scan, which only a power loss or a rebuild triggers). The journal bytes are written by the test
/// (the exact bytes the two kills leave); the control round shows the same orphan removed without the torn
/// record in front.
final class KVCacheTornJournalReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Leaves `data/<name>` (no row uses it) and `journal` in write.lock, as killed writers would.
    private func leaveOrphan(_ name: String, journal: [UInt8]) throws {
        try Data(repeating: 7, count: 321).write(to: URL(fileURLWithPath: directory.path + "/data/" + name))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.path + "/write.lock"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(journal))
        try handle.close()
    }

    func testARecordBehindATornOneIsStillCleanedUp() throws {
        let first = try KVStorage(path: directory.path, type: .file)
        try first.save(key: "kept", value: Data(repeating: 1, count: 500), filename: "kept-file")
        first.close()

        // Control: a killed writer's record alone is worked off by the next exclusive open.
        // (Records in the journal's format, `KVStorage.journalRecord`: "<count> <name> <check>\n".)
        try leaveOrphan("orphan-a", journal: KVStorage.journalRecord("orphan-a"))
        let control = try KVStorage(path: directory.path, type: .file)
        XCTAssertTrue(control.openReport.ranCrashCleanup)
        XCTAssertFalse(control.cleanupReport.fullScan, "control round: a well-formed journal needs no full scan")
        XCTAssertEqual(try control._checkInvariants(), [], "control round: the journal mechanism itself failed")
        control.close()

        // A torn record (writer killed in its pwrite: 40 bytes of name announced, 9 written), then a
        // complete record appended behind it by the next writer, killed after its rename into data/.
        try leaveOrphan("orphan-b", journal: Array("40 trimmed-n".utf8) + KVStorage.journalRecord("orphan-b"))
        let storage = try KVStorage(path: directory.path, type: .file)
        defer { storage.close() }
        XCTAssertTrue(storage.openReport.ranCrashCleanup)
        XCTAssertEqual(try storage._checkInvariants(), [],
                       "the record behind the torn one was ignored; data/ = \((try? directory.files(in: "data")) ?? [])")
        XCTAssertEqual(try storage.itemValue(forKey: "kept"), Data(repeating: 1, count: 500))
    }
}
