@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (defect): `noteCheckpoint` (7ba82df) takes a checkpoint's smaller count for this connection's own
/// when the WAL the checkpoint copied holds fewer frames than this connection had counted when it began
/// (another connection restarted the WAL meanwhile). But it did so even when this connection committed while
/// the checkpoint ran: its count had moved on (the WAL hook saw no restart: one commit took the WAL past the
/// old count), and the note replaced it with the checkpoint's older, smaller one and counted all of that as
/// copied back. Real SQLite, three connections: the deferred one of a store, another store's, and the
/// checkpoint's. Before the fix the WAL held 1,500 and more frames nobody had copied while the count read
/// 3 frames, all copied: `walHoldsUncopiedFrames` (a trim then skips the checkpoint it makes before its first
/// step, and its steps take the WAL towards the bound where a commit checkpoints under the store lock) and
/// `walIsLong` (the access-time deferral) read false.
final class KVCacheCheckpointNoteReviewTests: XCTestCase {
    func testCommitsOfOursAfterAnotherConnectionRestartedTheWALStayUncopied() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint-note-review")
        defer { try? directory.remove() }
        let manifest = directory.path + "/manifest.sqlite"
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        storage.deferCheckpoints() // as `DiskCache` does
        let state = try XCTUnwrap(storage.database.walState)

        // Given: this connection counted about 1,100 frames (one commit of a 4.5 MB inline value)…
        try storage.save(key: "first", value: testBytes(4_500_000, seed: 1))
        let counted = state.frames
        XCTAssertGreaterThanOrEqual(counted, Int32(KVStorage.checkpointFrames))
        // …all of them copied back (a checkpoint whose note is not looked at here), and another connection's
        // commit restarted the WAL.
        let copied = try KVStorage.checkpoint(manifestAt: manifest)
        XCTAssertEqual(copied.checkpointed, copied.log)
        let other = try KVStorage(path: directory.path, type: .sqlite)
        try other.save(key: "other", value: testBytes(10, seed: 2))
        other.close()

        // When: a checkpoint begins (what this connection knows then), copies the short restarted WAL…
        let seen = storage.walSight()
        let result = try KVStorage.checkpoint(manifestAt: manifest)
        XCTAssertLessThan(result.log, seen.frames, "the checkpoint found the restarted WAL")
        // …and, before its result is noted, this connection commits: one value of more frames than its old count.
        try storage.save(key: "second", value: testBytes(6_000_000, seed: 3))
        let ours = state.frames
        XCTAssertGreaterThanOrEqual(ours, seen.frames, "the hook saw no restart")
        storage.noteCheckpoint(result, seen: seen)

        // Then: the frames of that commit are not counted as copied back.
        XCTAssertTrue(storage.walHoldsUncopiedFrames,
                      "\(ours) frames nobody copied read as copied back (count \(state.frames), copied \(state.backfilled))")
        XCTAssertGreaterThanOrEqual(state.frames, ours, "the checkpoint's older count replaced this connection's")
        // The truth, from SQLite: a checkpoint now finds at least that many frames in the WAL.
        let now = try KVStorage.checkpoint(manifestAt: manifest)
        XCTAssertGreaterThanOrEqual(now.log, ours)
    }
}
