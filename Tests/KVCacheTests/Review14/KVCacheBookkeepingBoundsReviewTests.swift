@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review 14 (attack; the code held when this test was written): the bounded reads of the bookkeeping files at
/// their bounds and one byte past. An intent journal of exactly `maxJournalSize` bytes of sound records is read
/// whole and worked off by name (no full scan), its orphan removed; one byte more (still sound records) is not
/// read, and the cleanup scans the whole store instead (the orphan goes too) and empties it. An `instances` file
/// of exactly `InstanceSlots.maxSize` bytes (this boot's header, every slot free) is a clean shutdown (no
/// cleanup); one byte more is damage: a full scan, and the file is cut back to the bound.
final class KVCacheBookkeepingBoundsReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory("kvcache-bookkeeping-bounds") }
    override func tearDownWithError() throws { try directory.remove() }

    /// Sound records naming `orphan` then names of no file, `size` bytes in all.
    private static func journal(size: Int) -> [UInt8] {
        var bytes = KVStorage.journalRecord("orphan")
        var index = 0
        while size - bytes.count > 400 {
            let name = "gone-\(index)-" + String(repeating: "p", count: 180)
            bytes += KVStorage.journalRecord(name)
            index += 1
        }
        // The last record fills the rest exactly: "<3 digits> <name> <8 hex>\n" is 14 bytes around the name.
        let rest = size - bytes.count
        bytes += KVStorage.journalRecord(String(repeating: "z", count: rest - 14))
        precondition(bytes.count == size)
        return bytes
    }

    /// A closed store at `path` holding one entry, with `data/orphan` (no row uses it) and `journal` as
    /// write.lock.
    private func prepare(_ path: String, journal: [UInt8]) throws {
        let storage = try KVStorage(path: path, type: .file)
        try storage.save(key: "kept", value: testBytes(3_000, seed: 1), filename: "kept")
        storage.close()
        try Data(count: 123).write(to: URL(fileURLWithPath: path + "/data/orphan"))
        try Data(journal).write(to: URL(fileURLWithPath: path + "/write.lock"))
    }

    func testAJournalAtItsBoundIsReadAndOneBytePastIsAFullScan() throws {
        for (size, fullScan) in [(KVStorage.maxJournalSize, false), (KVStorage.maxJournalSize + 1, true)] {
            let path = directory.path + "/journal-\(size)"
            try prepare(path, journal: Self.journal(size: size))
            let storage = try KVStorage(path: path, type: .file)
            defer { storage.close() }
            XCTAssertTrue(storage.openReport.ranCrashCleanup, "\(size) bytes")
            XCTAssertEqual(storage.cleanupReport.fullScan, fullScan, "\(size) bytes")
            XCTAssertEqual(try directory.files(in: "journal-\(size)/data"), ["kept"], "\(size) bytes: the orphan")
            XCTAssertTrue(try storage.journalIsEmpty(), "\(size) bytes")
            XCTAssertEqual(try storage.itemValue(forKey: "kept"), testBytes(3_000, seed: 1))
            XCTAssertEqual(try storage._checkInvariants(), [])
        }
    }

    func testAnInstancesFileAtItsBoundIsReadAndOneBytePastIsAFullScan() throws {
        let bootID = try XCTUnwrap(InstanceSlots.bootID)
        var header = InstanceSlots.magic + bootID
        header += [UInt8](repeating: UInt8(ascii: " "), count: InstanceSlots.headerSize - 1 - header.count) + [UInt8(ascii: "\n")]
        for (size, clean) in [(InstanceSlots.maxSize, true), (InstanceSlots.maxSize + 1, false)] {
            let path = directory.path + "/instances-\(size)"
            try prepare(path, journal: [])
            let slots = header + [UInt8](repeating: InstanceSlots.free, count: size - InstanceSlots.headerSize)
            try Data(slots).write(to: URL(fileURLWithPath: path + "/instances"))
            let storage = try KVStorage(path: path, type: .file)
            defer { storage.close() }
            XCTAssertEqual(storage.openReport.previousShutdownWasClean, clean, "\(size) bytes")
            XCTAssertEqual(storage.openReport.ranCrashCleanup, !clean, "\(size) bytes")
            if !clean {
                XCTAssertTrue(storage.cleanupReport.fullScan, "\(size) bytes")
                XCTAssertEqual(try directory.files(in: "instances-\(size)/data"), ["kept"], "\(size) bytes: the orphan")
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/instances")
            XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, InstanceSlots.maxSize, "\(size) bytes")
            XCTAssertEqual(try storage.itemValue(forKey: "kept"), testBytes(3_000, seed: 1))
        }
    }
}
