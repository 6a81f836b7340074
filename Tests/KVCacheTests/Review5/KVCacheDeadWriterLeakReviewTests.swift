@testable import KVCache
import Foundation
import XCTest

/// Review (defect): what a SIGKILLed writer leaves is cleaned up only by an exclusive opener — an open while no
/// other instance has the folder open. A long-running process (a server, a sidecar) keeps one instance open
/// for its whole life, so beside it that open never comes, and each worker killed in a write (OOM killer,
/// deploys, crash loops) leaves, for as long as the survivor lives:
///   - its temporary in `tmp/` (a whole value, outside `totalCost()`, so no trim and no `costLimit` or
///     `freeDiskSpaceLimit` ever removes it: the disk fills with dead temporaries while the trim evicts live
///     values to make room);
///   - its slot in `instances`, marked open with no lock: non-exclusive openers skip dead slots and never free
///     one, so after 65,536 deaths every new open throws `EUSERS` until the survivor closes.
final class KVCacheDeadWriterLeakReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// Child side: saves large values in files until killed.
    func testChildLargeWriter() throws {
        guard let path = ProcessInfo.processInfo.environment["KVCACHE_DEAD_WRITER_PATH"] else {
            throw XCTSkip("child writer: runs only inside KVCacheDeadWriterLeakReviewTests")
        }
        let storage = try KVStorage(path: path, type: .file)
        let value = testBytes(1 << 20, seed: 7)
        var big = Data(capacity: 16 << 20) // 16 MB: the write of its temporary takes long enough to kill it there
        for _ in 0..<16 { big.append(value) }
        emitLine("READY")
        for sequence in 0..<1_000_000 {
            try storage.save(key: "child-\(getpid())-\(sequence)", value: big, filename: "child-\(getpid())-\(sequence)")
        }
    }

    func testTemporariesOfKilledWritersDoNotPileUpBesideALongRunningInstance() throws {
        let survivor = try DiskCache(path: directory.path, inlineThreshold: 1_024)
        try survivor.setObject(testBytes(4_000, seed: 1), forKey: "survivor")
        var kills = 0
        for _ in 0..<4 {
            if try killLargeWriterMidWrite(path: directory.path) { kills += 1 }
        }
        XCTAssertGreaterThanOrEqual(kills, 3, "kills that landed during a temporary's write")
        // The survivor goes on: writes, trims to its limits, and a new instance opens and closes beside it.
        try survivor.setObject(testBytes(4_000, seed: 2), forKey: "survivor-2")
        survivor.costLimit = 1 << 30
        try survivor.trimToLimits()
        let visitor = try KVStorage(path: directory.path, type: .file)
        visitor.close()

        let leftovers = try directory.files(in: "tmp")
        let bytes = try leftovers.reduce(Int64(0)) { total, name in
            let size = try FileManager.default.attributesOfItem(atPath: directory.path + "/tmp/" + name)[.size] as? NSNumber
            return total + (size?.int64Value ?? 0)
        }
        XCTAssertEqual(leftovers, [], "\(kills) writers killed beside a live instance left \(leftovers.count) temporaries (\(bytes) bytes, counted in no total) that nothing removes while it lives")
        let slots = try KVStorage._instanceSlots(atPath: directory.path)
        XCTAssertEqual(slots?.dead ?? -1, 0, "dead slots kept while the survivor lives: \(String(describing: slots))")
    }

    /// Follow-up of the fix: with no new opener at all, the long-running instance's own trim (the background
    /// one, or `trimToLimits()`) frees what the killed writers left.
    func testALongRunningDiskCacheReapsKilledWritersWithNoNewOpener() throws {
        let survivor = try DiskCache(path: directory.path, inlineThreshold: 1_024)
        try survivor.setObject(testBytes(4_000, seed: 1), forKey: "survivor")
        // One kill (a second writer's open would reap the first one's slot itself).
        XCTAssertTrue(try killLargeWriterMidWrite(path: directory.path), "a kill during a temporary's write")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 1, "the kill leaves a dead slot")
        XCTAssertFalse(try directory.files(in: "tmp").isEmpty, "a killed writer's temporary")
        try survivor.trimToLimits()
        XCTAssertEqual(try directory.files(in: "tmp"), [], "temporaries of killed writers left beside the survivor")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 0, "dead slots kept by the survivor")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.open, 1, "the survivor's own slot")
        XCTAssertEqual(try survivor.object(forKey: "survivor"), testBytes(4_000, seed: 1))
    }

    /// The slots the kills above leave, at the count a long-lived instance's neighbours reach: 65,536 worker
    /// deaths (the file written as those deaths leave it: a byte `o` per slot, no lock on it).
    func testDeadSlotsBesideALongRunningInstanceNeverLockOutNewOpeners() throws {
        let survivor = try KVStorage(path: directory.path, type: .mixed)
        defer { survivor.close() }
        XCTAssertTrue(try killLargeWriterMidWrite(path: directory.path), "one real kill")
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.dead, 1, "a kill leaves a dead slot")
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: directory.path + "/instances"))
        try handle.seek(toOffset: UInt64(InstanceSlots.headerSize))
        let current = try handle.readToEnd() ?? Data()
        var slots = [UInt8](current)
        slots += [UInt8](repeating: InstanceSlots.free, count: max(0, InstanceSlots.maxSlots - slots.count))
        for index in slots.indices where slots[index] != InstanceSlots.open && index != 0 { slots[index] = InstanceSlots.open }
        try handle.seek(toOffset: UInt64(InstanceSlots.headerSize))
        try handle.write(contentsOf: Data(slots))
        try handle.close()
        XCTAssertEqual(try KVStorage._instanceSlots(atPath: directory.path)?.open, 1, "only the survivor is open")

        do {
            let visitor = try KVStorage(path: directory.path, type: .mixed)
            visitor.close()
        } catch {
            XCTFail("a new instance cannot open beside the survivor after \(InstanceSlots.maxSlots - 1) worker deaths: \(error)")
        }
    }
}
