@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (defect): the intent-journal cleanup that an open instance runs beside live ones
/// (`reapDeadInstancesBesideThis` → `cleanUpJournalBesideOthers`, what `DiskCache`'s trim does first) looked
/// up each journaled name's rows with plain SELECTs on its connection, inside the read snapshot the instance
/// kept from its last reads (see "Reads" in KVStorage.swift). A writer in another process that saved (its
/// `save` returned) and was killed before it truncated its journal records left names whose rows that stale
/// snapshot did not show: the cleanup took the just-placed value files for orphans and moved them to trash,
/// and the committed rows then pointed at missing files (removed as damaged at the next read) — acknowledged
/// values lost. (The other way round, a name a stale snapshot still shows in use stays in `data/` for good.)
/// The child holds `write.lock` after its saves returned, so the kill lands exactly where a writer killed
/// between its COMMIT and the end of its journal scope leaves the folder: the same journal bytes.
final class KVCacheStaleSnapshotCleanupReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-stale-cleanup") }
    override func tearDownWithError() throws { try directory.remove() }

    /// Child side: saves a new key and replaces an existing one (both saves return), prints `READY` while
    /// still holding `write.lock` (its journal records not yet truncated), and waits to be killed.
    func testChildWriterKilledAfterItsSavesReturned() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_STALE_CLEANUP_PATH"] else {
            throw XCTSkip("child writer: runs only inside KVCacheStaleSnapshotCleanupReviewTests")
        }
        let storage = try KVStorage(path: path, type: .file)
        try storage.withFileLock { () throws(KVCacheError) in
            try storage.save(key: "new", value: testBytes(7_000, seed: 2), filename: "new")
            try storage.save(key: "replaced", value: testBytes(9_000, seed: 3), filename: "replaced")
            emitLine("READY")
            awaitStartSignal() // never sent: killed here
        }
    }

    func testTheCleanupBesideOthersSeesTheRowsCommittedBeforeIt() throws {
        let survivor = try KVStorage(path: directory.path, type: .file)
        defer { survivor.close() }
        survivor.snapshotAgeLimit = 3_600
        try survivor.save(key: "replaced", value: testBytes(5_000, seed: 1), filename: "replaced")
        try survivor.save(key: "mine", value: testBytes(6_000, seed: 4), filename: "mine")
        // A read: the survivor's snapshot begins here, before the child's commits.
        XCTAssertEqual(try survivor.itemValue(forKey: "mine"), testBytes(6_000, seed: 4))
        XCTAssertTrue(survivor.hasReadSnapshot)

        let child = try ChildProcess(test: "KVCacheTests.KVCacheStaleSnapshotCleanupReviewTests/testChildWriterKilledAfterItsSavesReturned",
                                     environment: ["KVCACHE_STALE_CLEANUP_PATH": directory.path])
        let ready = child.waitUntilReady(timeout: 60)
        child.kill()
        _ = child.finish()
        XCTAssertTrue(ready, "the child never saved: \(child.outputSoFar)")
        XCTAssertTrue(child.wasKilled)
        XCTAssertEqual(try directory.files(in: "data"), ["mine", "new", "replaced.1"], "the child's saves")
        XCTAssertFalse(try survivor.journalIsEmpty(), "the dead writer's records")

        XCTAssertEqual(survivor.reapDeadInstancesBesideThis(), 1, "the dead writer's slot")
        XCTAssertTrue(try survivor.journalIsEmpty(), "the records were worked off")
        XCTAssertEqual(try directory.files(in: "data"), ["mine", "new", "replaced.1"],
                       "the cleanup moved files that committed rows use")
        survivor.endReadSnapshot()
        XCTAssertEqual(try survivor._checkInvariants(), [])
        let reader = try KVStorage(path: directory.path, type: .file)
        defer { reader.close() }
        XCTAssertEqual(try reader.itemValue(forKey: "new"), testBytes(7_000, seed: 2), "a saved value was lost")
        XCTAssertEqual(try reader.itemValue(forKey: "replaced"), testBytes(9_000, seed: 3), "a saved value was lost")
        XCTAssertEqual(try reader.itemValue(forKey: "mine"), testBytes(6_000, seed: 4))
    }
}
