@testable import KVCache
import Foundation
import Synchronization
import TestSupport
import XCTest

/// WAL checkpoints run outside the store lock (see KVStorage+Checkpoint.swift): `DiskCache`'s commits
/// never checkpoint (SQLite's automatic checkpoint, with its `fsync`s, ran inside a commit under the store
/// lock), a background checkpoint catches up, and a commit that finds the WAL at its bound still
/// checkpoints itself. Observed through the WAL-index header in `-shm` (SQLite's documented file format):
/// `mxFrame` (the frames in the WAL) and `nBackfill` (the frames already copied back into the database).
final class DiskCacheCheckpointTests: XCTestCase {
    /// (mxFrame, nBackfill) from the WAL index of the manifest in `folder` (native byte order).
    private func walIndex(_ folder: String) throws -> (frames: UInt32, backfilled: UInt32) {
        try Self.walIndex(folder)
    }

    private static func walIndex(_ folder: String) throws -> (frames: UInt32, backfilled: UInt32) {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.sqlite-shm"))
        XCTAssertGreaterThanOrEqual(data.count, 100)
        func word(_ offset: Int) -> UInt32 { data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) } }
        return (word(16), word(96))
    }

    func testCommitsLeaveTheCheckpointToTheBackgroundQueue() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        // Hold back the background checkpoint: whatever is checkpointed meanwhile was checkpointed by a commit.
        // A checkpoint still running would defer the reads' flush (`checkpointDefersAccessFlush`): let it end.
        cache.core.waitForCheckpoint()
        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        var written = 0
        while try walIndex(directory.path).frames < 2_500 {
            try cache.setObject(testBytes(2_048, seed: written), forKey: "key-\(written)")
            written += 1
            XCTAssertLessThan(written, 20_000, "the WAL never reached 2,500 frames: a commit checkpointed it")
            if written >= 20_000 { return }
        }
        // SQLite's automatic checkpoint would have run at 1,000 frames, inside a commit.
        let before = try walIndex(directory.path)
        XCTAssertEqual(before.backfilled, 0, "a commit checkpointed under the store lock (\(before))")

        cache.core.checkpointQueue.resume()
        suspended = false
        cache.core.waitForCheckpoint()
        let after = try walIndex(directory.path)
        XCTAssertEqual(after.backfilled, after.frames, "the background checkpoint did not copy the WAL back (\(after))")
        XCTAssertGreaterThan(after.frames, 0)

        // The next commit restarts the WAL from its beginning; every value is intact.
        try cache.setObject(testBytes(2_048, seed: -1), forKey: "after")
        XCTAssertLessThan(try walIndex(directory.path).frames, before.frames)
        for i in stride(from: 0, to: written, by: 97) {
            XCTAssertEqual(try cache.object(forKey: "key-\(i)"), testBytes(2_048, seed: i))
        }
        XCTAssertEqual(try cache.object(forKey: "after"), testBytes(2_048, seed: -1))
    }

    /// A stream of writes the background checkpoint never caught up with leaves a long WAL nothing copied
    /// back: the trim's steps would append to it up to the bound where a commit checkpoints under the store
    /// lock (40–90 ms per read in `make bench`'s 1M trim). The trim copies it back first, without the lock:
    /// its first step's commit restarts the WAL.
    func testATrimCopiesALongWALBackBeforeItsFirstStepWhichRestartsIt() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint-trim")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        cache.core.waitForCheckpoint()
        cache.core.checkpointQueue.suspend()
        var suspended = true
        defer { if suspended { cache.core.checkpointQueue.resume() } }
        var written = 0
        while try walIndex(directory.path).frames < 2_500 {
            try cache.setObject(testBytes(2_048, seed: written), forKey: "key-\(written)")
            written += 1
            if written >= 20_000 { return XCTFail("the WAL never reached 2,500 frames") }
        }
        let before = try walIndex(directory.path)
        XCTAssertEqual(before.backfilled, 0, "\(before)")
        let atFirstStep = Mutex<(frames: UInt32, backfilled: UInt32)?>(nil)
        let path = directory.path
        cache.core.trimStepHook.withLock { hook in
            hook = { step in
                guard step == 1, let index = try? Self.walIndex(path) else { return }
                atFirstStep.withLock { $0 = index }
            }
        }
        try cache.trim(toCount: written - 3 * KVStorage.trimBatch)
        let first = try XCTUnwrap(atFirstStep.withLock { $0 }, "the trim made no step")
        XCTAssertLessThan(first.frames, before.frames / 2,
                          "the first step appended to the long WAL (\(before) → \(first)) instead of restarting it")
        XCTAssertEqual(try cache.totalCount(), written - 3 * KVStorage.trimBatch)
        cache.core.checkpointQueue.resume()
        suspended = false
        var present = 0
        for i in 0..<written {
            guard let value = try cache.object(forKey: "key-\(i)") else { continue }
            present += 1
            XCTAssertEqual(value, testBytes(2_048, seed: i), "key-\(i)")
        }
        XCTAssertEqual(present, written - 3 * KVStorage.trimBatch)
    }

    func testACommitAtTheBoundCheckpointsItselfAndTheDueCountIsReset() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .mixed)
        storage.database.deferCheckpoints(inlineBound: 300)
        XCTAssertFalse(storage.takeCheckpointDue())
        var written = 0, due = 0, largest: UInt32 = 0, last: UInt32 = 0, appended = 0
        while written < 2_000 {
            try storage.save(key: "key-\(written)", value: testBytes(2_048, seed: written))
            written += 1
            if storage.takeCheckpointDue() {
                due += 1
                XCTAssertFalse(storage.takeCheckpointDue(), "the due count was not reset")
            }
            let frames = try walIndex(directory.path).frames
            appended += Int(frames >= last ? frames - last : frames)
            last = frames
            largest = max(largest, frames)
        }
        // Each save appends at least one frame: due at least every `checkpointFrames` of them.
        XCTAssertGreaterThanOrEqual(due, 1)
        // Nobody checkpointed in the background: the commits at the bound did, and the WAL restarted.
        XCTAssertGreaterThan(appended, 1_000)
        XCTAssertLessThan(largest, 300 + 16, "the WAL outgrew its bound")
        for i in stride(from: 0, to: written, by: 131) {
            XCTAssertEqual(try storage.itemValue(forKey: "key-\(i)"), testBytes(2_048, seed: i))
        }
    }

    func testTheBackgroundCheckpointNeverCreatesAMissingManifest() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let manifest = directory.path + "/manifest.sqlite"
        XCTAssertThrowsError(try KVStorage.checkpoint(manifestAt: manifest)) { error in
            guard case .sqlite(let code, _, _) = error as? KVCacheError else { return XCTFail("\(error)") }
            XCTAssertEqual(code & 0xFF, SQLiteCode.cantOpen)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: manifest))
    }

    func testReadsKeepTheirAccessTimesInMemoryWhileATrimCheckpointsUpToTheHardLimit() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        let keys = KVStorage.pendingAccessHardLimit + 8
        for i in 0..<keys { try storage.save(key: "k\(i)", value: testBytes(16, seed: i)) }
        let appends = storage.accessLogAppends
        storage.trimDefersAccessFlush = true
        for i in 0..<(KVStorage.pendingAccessHardLimit - 1) { XCTAssertNotNil(try storage.itemValue(forKey: "k\(i)")) }
        XCTAssertEqual(storage.accessLogAppends, appends, "a read committed while the trim checkpoints")
        XCTAssertEqual(storage.pendingAccessTimes.count, KVStorage.pendingAccessHardLimit - 1)
        XCTAssertNotNil(try storage.itemValue(forKey: "k\(KVStorage.pendingAccessHardLimit - 1)"))
        XCTAssertEqual(storage.accessLogAppends, appends + 1, "pending access times outgrew the hard limit")
        // One batch per hold of the lock, not the whole backlog.
        XCTAssertEqual(storage.pendingAccessTimes.count, KVStorage.pendingAccessHardLimit - KVStorage.pendingAccessLimit)

        // Once the deferral ends, each read appends one batch until less than a batch is pending. The reads
        // are of keys still pending, so none adds to the backlog (reading fixed keys flaked in CI, about once in
        // 64 runs: with the per-process hash seed, which keys the first batch took varies, and when it took
        // the first three read here, the reads after the backlog added up to a fourth full batch).
        storage.trimDefersAccessFlush = false
        let backlog = storage.pendingAccessTimes.count
        var reads = 0
        while storage.pendingAccessTimes.count >= KVStorage.pendingAccessLimit, reads <= backlog {
            let before = storage.accessLogAppends
            let key = try XCTUnwrap(storage.pendingAccessTimes.keys.first).base
            XCTAssertNotNil(try storage.itemValue(forKey: key))
            XCTAssertEqual(storage.accessLogAppends, before + 1, "a read with a full batch pending appended no batch")
            reads += 1
        }
        XCTAssertEqual(reads, backlog / KVStorage.pendingAccessLimit)
        XCTAssertEqual(storage.accessLogAppends, appends + 1 + backlog / KVStorage.pendingAccessLimit)
        XCTAssertLessThan(storage.pendingAccessTimes.count, KVStorage.pendingAccessLimit)
    }

    func testATrimWithAConcurrentReaderLeavesNoDeferredFlagAndEveryKeptValueIntact() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let count = 3_000
        for i in 0..<count { try cache.setObject(testBytes(2_048, seed: i), forKey: "key-\(i)") }
        let stop = Atomic(false)
        let failures = Atomic(0)
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread {
            defer { finished.signal() }
            var rng = SplitMix64(seed: 14)
            while !stop.load(ordering: .acquiring) {
                let i = Int(rng.next() % UInt64(count))
                // Either removed by the trim or intact.
                do {
                    if let value = try cache.object(forKey: "key-\(i)"), value != testBytes(2_048, seed: i) { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        reader.start()
        let trimmed = Result { try cache.trim(toCount: count / 3) }
        stop.store(true, ordering: .releasing)
        finished.wait()
        try trimmed.get()
        XCTAssertEqual(try cache.totalCount(), count / 3)
        XCTAssertFalse(cache.core.storage.withLock { $0.defersAccessFlush })
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        var kept = 0
        for i in 0..<count {
            if let value = try cache.object(forKey: "key-\(i)") {
                XCTAssertEqual(value, testBytes(2_048, seed: i))
                kept += 1
            }
        }
        XCTAssertEqual(kept, count / 3)
    }

    /// A trim that runs while the background checkpoint defers access-time flushes ends only its own
    /// deferral: reads go on keeping their access times in memory until the checkpoint ends (one shared flag
    /// let the trim's end, or its next step, clear the checkpoint's).
    func testATrimDuringTheBackgroundCheckpointLeavesTheCheckpointsDeferral() throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        let count = 600
        for i in 0..<count { try cache.setObject(testBytes(512, seed: i), forKey: "key-\(i)") }
        cache.core.waitForCheckpoint()
        cache.core.storage.withLock { $0.checkpointDefersAccessFlush = true }  // as the background checkpoint does
        try cache.trim(toCount: count / 2)
        let appends = cache.core.storage.withLock { $0.accessLogAppends }
        for i in 0..<count { _ = try cache.object(forKey: "key-\(i)") }
        XCTAssertTrue(cache.core.storage.withLock { $0.defersAccessFlush }, "the trim ended the checkpoint's deferral")
        XCTAssertEqual(cache.core.storage.withLock { $0.accessLogAppends }, appends, "a read committed while the checkpoint runs")
        cache.core.storage.withLock { $0.checkpointDefersAccessFlush = false }
        XCTAssertEqual(try cache.totalCount(), count / 2)
    }
}

/// `noteCheckpoint` records what a checkpoint copied back against the WAL it copied, and never more than
/// this connection's own frame count.
final class DiskCacheCheckpointNoteTests: XCTestCase {
    /// Runs `body` on the storage of a fresh cache whose WAL count reads `frames`, none copied back.
    private func withCount(frames: Int32, _ body: (KVStorage, WALState) throws -> Void) throws {
        let directory = try TemporaryDirectory("kvcache-checkpoint-note")
        defer { try? directory.remove() }
        let cache = try DiskCache(path: directory.path)
        try cache.setObject(testBytes(64, seed: 1), forKey: "key")
        cache.core.waitForCheckpoint()
        try cache.core.storage.withLock { storage in
            let state = try XCTUnwrap(storage.database.walState)
            state.frames = frames
            state.backfilled = 0
            try body(storage, state)
        }
    }

    /// A checkpoint's result noted after the manifest was reopened (a fresh count of 100 frames) must not
    /// count the new WAL's frames, up to the old WAL's size, as copied back: they were not.
    func testACheckpointOfAnotherCountIsNotNoted() throws {
        let long = KVStorage.inlineCheckpointFrames / 2 + 10
        try withCount(frames: 100) { storage, state in
            let older = WALSight(identity: state.identity - 1, frames: long + 1_000, restarts: 0)
            storage.noteCheckpoint((log: long + 1_000, checkpointed: long + 1_000), seen: older)
            XCTAssertEqual(state.backfilled, 0, "a checkpoint of another WAL was counted as copying this one")
            state.frames = long
            XCTAssertTrue(storage.walIsLong, "a long WAL nobody copied back reads as copied back")
        }
    }

    /// Frames other connections appended (the checkpoint saw more than this connection's count) are not
    /// counted past this connection's own count.
    func testANoteNeverCountsMoreThanThisConnectionsFramesAsCopiedBack() throws {
        try withCount(frames: 100) { storage, state in
            storage.noteCheckpoint((log: 1_500, checkpointed: 1_500), seen: storage.walSight())
            XCTAssertEqual(state.backfilled, 100)
            XCTAssertEqual(state.frames, 100)
        }
    }

    /// Commits of ours made while the checkpoint ran are not in its result: a WAL at 15,715 frames was noted as
    /// 15,553 frames all copied back in `make bench`, so the trim did not copy it first and its steps took it
    /// to the bound where a commit checkpoints under the store lock.
    func testCommitsMadeWhileTheCheckpointRanStayUncopied() throws {
        try withCount(frames: 15_553) { storage, state in
            let seen = storage.walSight()
            state.frames = 15_715 // our commits meanwhile
            storage.noteCheckpoint((log: 15_553, checkpointed: 15_553), seen: seen)
            XCTAssertEqual(state.frames, 15_715, "the checkpoint's older count replaced this connection's")
            XCTAssertEqual(state.backfilled, 15_553)
            XCTAssertTrue(storage.walHoldsUncopiedFrames, "162 frames nobody copied read as copied back")
        }
    }

    /// A restart by a commit of ours while the checkpoint ran: the result is about the old WAL.
    func testAWALRestartedByUsWhileTheCheckpointRanIsNotNotedAsCopied() throws {
        try withCount(frames: 9_000) { storage, state in
            let seen = storage.walSight()
            state.frames = 40
            state.restarts += 1
            storage.noteCheckpoint((log: 9_000, checkpointed: 9_000), seen: seen)
            XCTAssertEqual(state.backfilled, 0, "the restarted WAL's frames were counted as copied back")
            XCTAssertEqual(state.frames, 40)
        }
    }

    /// Fewer frames than this connection had committed before the checkpoint began: another connection
    /// restarted the WAL, and the result is the new WAL's.
    func testAWALRestartedByAnotherConnectionTakesTheCheckpointsCount() throws {
        try withCount(frames: 9_000) { storage, state in
            storage.noteCheckpoint((log: 40, checkpointed: 40), seen: storage.walSight())
            XCTAssertEqual(state.frames, 40)
            XCTAssertEqual(state.backfilled, 40)
            XCTAssertFalse(storage.walIsLong)
        }
    }
}
