@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 6 (attacks on f611e32; the code held when these were written, kept as regression tests): every
/// opener that is not exclusive now reaps the slots of dead instances and removes the temporaries named with
/// their slot's prefix. Attacked here:
///   - a live writer in another process, mid-save (its temporary in `tmp/`), while new instances keep opening
///     beside it and reaping writers SIGKILLed meanwhile: it must never lose a temporary (its save would fail
///     with ENOENT at the rename);
///   - a live instance of this process whose next temporary (its exact name) sits in `tmp/` while a new
///     instance opens and reaps a dead slot;
///   - several openers reaping the same dead slots at once (threads of this process: OFD locks of separate
///     descriptions): every open succeeds, every dead slot is freed once, every dead temporary goes.
final class KVCacheReaperLiveWriterReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-reaper") }
    override func tearDownWithError() throws { try directory.remove() }

    /// Child side: a live writer saving 4 MB values in files until killed; prints `SLOT <n>`, then
    /// `ACK <n>` after each save, `ERROR <error>` (and stops) on a failure.
    func testChildLiveWriter() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_REAPER_LIVE_PATH"] else {
            throw XCTSkip("child writer: runs only inside KVCacheReaperLiveWriterReviewTests")
        }
        let storage = try KVStorage(path: path, type: .file)
        var big = Data(capacity: 4 << 20)
        for seed in 0..<4 { big.append(testBytes(1 << 20, seed: 100 + seed)) }
        emitLine("SLOT \(storage.instanceSlots?.slot ?? -1)")
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            do {
                try storage.save(key: "live-\(sequence % 4)", value: big, filename: "live-\(sequence % 4)")
            } catch {
                emitLine("ERROR \(error)")
                return
            }
            emitLine("ACK \(sequence)")
        }
    }

    func testReapersBesideALiveWriterInAnotherProcessNeverTakeItsTemporaries() throws {
        let survivor = try KVStorage(path: directory.path, type: .file)
        defer { survivor.close() }
        let live = try ChildProcess(test: "KVCacheTests.KVCacheReaperLiveWriterReviewTests/testChildLiveWriter",
                                    environment: ["KVCACHE_REAPER_LIVE_PATH": directory.path])
        defer {
            live.kill()
            _ = live.finish()
        }
        XCTAssertTrue(live.waitUntilReady(timeout: 60), "live writer never got ready: \(live.outputSoFar)")
        let slotLine = live.outputSoFar.split(separator: "\n").first { $0.hasPrefix("SLOT ") }
        let liveSlot = try XCTUnwrap(slotLine.flatMap { Int($0.dropFirst(5)) }, "live writer's slot: \(live.outputSoFar)")
        let livePrefix = InstanceSlots.temporaryPrefix(liveSlot)
        var kills = 0, opensDuringALiveTemporary = 0
        for _ in 0..<3 {
            if try killLargeWriterMidWrite(path: directory.path, besides: liveSlot) { kills += 1 }
            // Open visitors while the live writer's temporary is in tmp/ (polling an external process, with a
            // deadline); the first one reaps the writer just killed.
            let deadline = Date().addingTimeInterval(5)
            var opened = 0
            while opened < 4 && Date() < deadline {
                guard try directory.files(in: "tmp").contains(where: { $0.hasPrefix(livePrefix) }) else {
                    usleep(500)
                    continue
                }
                let visitor = try KVStorage(path: directory.path, type: .file)
                visitor.close()
                opened += 1
            }
            opensDuringALiveTemporary += opened
            XCTAssertFalse(live.outputSoFar.contains("ERROR"), "the live writer failed: \(live.outputSoFar.suffix(400))")
        }
        XCTAssertGreaterThanOrEqual(kills, 2, "kills that landed during a temporary's write")
        XCTAssertGreaterThan(opensDuringALiveTemporary, 0, "no open happened while the live writer had a temporary")
        // The live writer goes on: it acknowledges saves after every reap.
        let acks = live.outputSoFar.split(separator: "\n").filter { $0.hasPrefix("ACK ") }.count
        let deadline = Date().addingTimeInterval(15)
        while live.outputSoFar.split(separator: "\n").filter({ $0.hasPrefix("ACK ") }).count < acks + 2 && Date() < deadline
            && !live.outputSoFar.contains("ERROR") { usleep(2_000) }
        XCTAssertFalse(live.outputSoFar.contains("ERROR"), "the live writer failed: \(live.outputSoFar.suffix(400))")
        XCTAssertGreaterThanOrEqual(live.outputSoFar.split(separator: "\n").filter { $0.hasPrefix("ACK ") }.count, acks + 2,
                                    "the live writer stopped acknowledging saves")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 0, "dead slots left")
        XCTAssertEqual(try directory.files(in: "tmp").filter { !$0.hasPrefix(livePrefix) }, [], "dead writers' temporaries left")
    }

    func testAReaperSparesTheExactTemporaryOfALiveInstanceOfThisProcess() throws {
        let survivor = try KVStorage(path: directory.path, type: .file)
        defer { survivor.close() }
        XCTAssertTrue(try killLargeWriterMidWrite(path: directory.path, besides: survivor.instanceSlots?.slot), "one real kill")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 1)
        // The name the survivor's next save writes its temporary under, there as if mid-save.
        let mine = survivor.uniqueName()
        XCTAssertTrue(FileManager.default.createFile(atPath: directory.path + "/tmp/" + mine, contents: Data(count: 100)))
        let visitor = try KVStorage(path: directory.path, type: .file)
        visitor.close()
        XCTAssertEqual(try directory.files(in: "tmp"), [mine], "the reaper took a live instance's temporary, or left the dead one's")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 0)
        try FileManager.default.removeItem(atPath: directory.path + "/tmp/" + mine)
        try survivor.save(key: "k", value: testBytes(5_000, seed: 3), filename: "k")
        XCTAssertEqual(try survivor.itemValue(forKey: "k"), testBytes(5_000, seed: 3))
    }

    /// Starts `count` writers at once and kills them all once each has a temporary in `tmp/` (several dead
    /// slots at once: a writer opening alone reaps the one before it). Returns the slots left dead.
    private func killWritersTogether(_ count: Int, besides own: Int?) throws -> Int {
        let children = try (0..<count).map { _ in
            try ChildProcess(test: "KVCacheTests.KVCacheDeadWriterLeakReviewTests/testChildLargeWriter",
                             environment: ["KVCACHE_DEAD_WRITER_PATH": directory.path])
        }
        var finished = false
        defer { if !finished { for child in children { child.kill(); _ = child.finish() } } }
        for child in children where !child.waitUntilReady(timeout: 60) { XCTFail("a writer never got ready: \(child.outputSoFar)") }
        let ownPrefix = own.map(InstanceSlots.temporaryPrefix)
        let deadline = Date().addingTimeInterval(15)
        // Polls external processes' progress (with a deadline).
        while Date() < deadline {
            let prefixes = Set(try directory.files(in: "tmp").filter { name in ownPrefix.map { !name.hasPrefix($0) } ?? true }
                .map { $0.prefix { $0 != "-" } })
            if prefixes.count >= count { break }
            usleep(1_000)
        }
        for child in children { child.kill() }
        for child in children { _ = child.finish() }
        finished = true
        return try KVStorage._instanceSlots(atPath: directory.path)?.dead ?? -1
    }

    func testOpenersReapingTheSameDeadSlotsAtOnceAllSucceed() throws {
        let survivor = try KVStorage(path: directory.path, type: .file)
        defer { survivor.close() }
        try survivor.save(key: "s", value: testBytes(6_000, seed: 9), filename: "s")
        let dead = try killWritersTogether(3, besides: survivor.instanceSlots?.slot)
        XCTAssertGreaterThanOrEqual(dead, 2, "dead slots left by writers killed together")
        XCTAssertGreaterThan(try directory.files(in: "tmp").count, 0, "no dead temporary to reap")
        let failures = FailureList()
        let path = directory.path
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let visitor = try KVStorage(path: path, type: .file)
                visitor.close()
            } catch {
                failures.append("\(error)")
            }
        }
        XCTAssertEqual(failures.all, [], "openers reaping at once failed")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 0)
        XCTAssertEqual(try directory.files(in: "tmp"), [])
        XCTAssertEqual(try survivor.itemValue(forKey: "s"), testBytes(6_000, seed: 9))
    }
}

/// Errors collected from concurrent openers (a lock around an array: appended from `concurrentPerform`).
private final class FailureList: @unchecked Sendable { // every access holds `lock`
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
