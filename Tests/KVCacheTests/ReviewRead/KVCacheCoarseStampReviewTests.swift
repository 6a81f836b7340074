@testable import KVCache
import TestSupport
import Foundation
import XCTest

/// Review of 6b8dd52: reads' access stamps came from `CLOCK_REALTIME_COARSE` (up to one kernel tick, 4 ms
/// here, behind the wall clock). The stamps stayed ordered within one instance, but a stamp is also a
/// wall-clock time that the age APIs compare with `Date()` and that other instances' (precise) write stamps
/// are ordered against. These tests showed both promises broken; 9a3335b went back to the precise clock.
final class KVCacheCoarseStampReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// `removeItems(earlierThan:)` "Removes every entry last accessed before `time`". A key read (through
    /// `itemValue`, the fast path) strictly after `time` was taken was last accessed after it: it must stay.
    /// With the coarse stamp the read is recorded up to a tick before `time`, and the key is removed.
    func testAValueReadAfterTheCutoffIsNotRemovedAsAccessedBeforeIt() throws {
        try assertReadsAfterTheCutoffSurvive(type: .sqlite, value: Data([1]), inFile: false) { storage, key in
            XCTAssertEqual(try storage.itemValue(forKey: key), Data([1]))
        }
    }

    /// The same through `item(forKey:)` and a value in a file (`recordAccess(_:)` goes through
    /// `recordAccess(ofKey:)` too).
    func testAnItemReadAfterTheCutoffIsNotRemovedAsAccessedBeforeIt() throws {
        try assertReadsAfterTheCutoffSurvive(type: .mixed, value: Data(repeating: 3, count: 5_000), inFile: true) { storage, key in
            XCTAssertNotNil(try storage.item(forKey: key))
        }
    }

    /// Ten rounds: save a key, wait several ticks (the save's own stamp is well before the cutoff), take the
    /// cutoff, `read` the key, remove what was last accessed before the cutoff: the key must stay.
    private func assertReadsAfterTheCutoffSurvive(
        type: KVStorage.StorageType, value: Data, inFile: Bool, read: (KVStorage, String) throws -> Void
    ) throws {
        let storage = try KVStorage(path: directory.path, type: type)
        defer { storage.close() }
        var removed: [Int] = []
        for round in 0..<10 {
            let key = "k\(round)"
            try storage.save(key: key, value: value, filename: inFile ? "f\(round)" : nil)
            usleep(10_000)
            let cutoff = Date()
            try read(storage, key)
            try storage.removeItems(earlierThan: cutoff)
            if try storage.itemInfo(forKey: key) == nil { removed.append(round) }
        }
        XCTAssertEqual(removed, [], "keys read after the cutoff were removed as last accessed before it (rounds \(removed))")
    }

    /// `DiskCache.trim(toAge:)`: "Removes values not read or written for more than `age` seconds". A round
    /// counts only when the whole read-then-trim took less than `age` (so the cutoff is provably before the
    /// read began, whatever the scheduler did): then the value was read less than `age` ago and must stay.
    func testDiskCacheTrimToAgeKeepsAValueReadWithinTheAge() throws {
        let cache = try DiskCache(path: directory.path)
        let age = 0.002
        var counted = 0
        var removed: [Int] = []
        // Until 20 rounds were fast enough to count (a loaded machine makes some slower than `age`).
        for round in 0..<200 where counted < 20 {
            let key = "k\(round)"
            try cache.setObject(Data([UInt8(truncatingIfNeeded: round)]), forKey: key)
            usleep(10_000)
            let readStart = Date()
            XCTAssertNotNil(try cache.object(forKey: key))
            try cache.trim(toAge: age)
            let elapsed = Date().timeIntervalSince(readStart)
            guard elapsed < age else { continue }
            counted += 1
            if try !cache.containsObject(forKey: key) { removed.append(round) }
        }
        print("KVCacheCoarseStampReviewTests: \(counted) rounds counted")
        XCTAssertGreaterThan(counted, 0, "no round fast enough to count")
        XCTAssertEqual(removed, [], "values read less than \(age) s before the trim were removed as older (rounds \(removed))")
    }

    /// Two instances of one folder (as two processes have): a key read through one instance after a key
    /// was written through the other is the more recently used, so trimming to one entry keeps it. The
    /// reader's coarse stamp falls before the writer's precise one, and the trim removes the key just read.
    func testAReadInOneInstanceAfterAWriteInAnotherIsTheMoreRecentAccess() throws {
        let reader = try KVStorage(path: directory.path, type: .sqlite)
        defer { reader.close() }
        let writer = try KVStorage(path: directory.path, type: .sqlite)
        defer { writer.close() }
        var wrong: [Int] = []
        for round in 0..<8 {
            try writer.removeAllItems()
            let read = "read-\(round)", written = "written-\(round)"
            try reader.save(key: read, value: Data([1]))
            usleep(10_000)
            try writer.save(key: written, value: Data([2]))   // used first
            XCTAssertEqual(try reader.itemValue(forKey: read), Data([1])) // used last
            reader.flushAccessTimes()
            try writer.removeItems(toFitCount: 1)
            if try writer.itemInfo(forKey: read) == nil { wrong.append(round) }
        }
        XCTAssertEqual(wrong, [], "LRU trim removed the most recently read key, kept the older write (rounds \(wrong))")
    }

    /// `KVStorageItem.lastAccessTime`: "When the value was last read or written". After a read that began
    /// after `before`, the next `item`/`itemInfo` reports that read's time: it must not be before `before`.
    func testTheReportedLastAccessTimeIsNotBeforeTheReadBegan() throws {
        let storage = try KVStorage(path: directory.path, type: .sqlite)
        defer { storage.close() }
        var early: [String] = []
        for round in 0..<10 {
            let key = "k\(round)"
            try storage.save(key: key, value: Data([1]))
            usleep(10_000)
            let before = Date()
            XCTAssertNotNil(try storage.itemValue(forKey: key))
            let reported = try XCTUnwrap(storage.itemInfo(forKey: key)).lastAccessTime
            if reported.manifestTime < before.manifestTime {
                early.append("round \(round): \(before.manifestTime - reported.manifestTime) µs early")
            }
        }
        XCTAssertEqual(early, [], "lastAccessTime before the read began")
    }
}
