@testable import KVCache
import Foundation
import XCTest

/// Review: after an in-use rebuild (recovery), the schema-v2 parts (totals, access log) and the clean-shutdown
/// count are still right.
final class KVCacheRebuildReviewTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testTotalsAccessLogAndCleanShutdownAfterAnInUseRebuild() throws {
        let storage = try KVStorage(path: directory.path, type: .mixed)
        for (index, key) in ["a", "b\0x", "\u{E9}", "e\u{301}"].enumerated() {
            try storage.save(key: key, value: testBytes(100 + index * 20_000, seed: index), filename: index % 2 == 0 ? nil : "f\(index)")
        }
        for key in ["a", "b\0x", "\u{E9}"] { _ = try storage.itemValue(forKey: key) }
        storage.flushAccessTimes()
        _ = try storage.database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
        try testBytes(64 * 1_024, seed: 9).write(to: URL(fileURLWithPath: directory.path + "/manifest.sqlite"))
        XCTAssertThrowsError(try storage.guarded { () throws(KVCacheError) in
            throw KVCacheError.sqlite(code: 11, message: "database disk image is malformed", operation: "test")
        })
        guard case .manifestRecreated? = storage.recoveryError else {
            return XCTFail("no rebuild: \(String(describing: storage.recoveryError))")
        }
        XCTAssertEqual(try storage.itemsCount(), 0)
        XCTAssertEqual(try storage.itemsSize(), 0)

        try storage.save(key: "\u{E9}", value: testBytes(10, seed: 1))
        try storage.save(key: "e\u{301}", value: testBytes(30_000, seed: 2), filename: "g")
        try storage.save(key: "n\0", value: testBytes(7, seed: 3))
        _ = try storage.itemValue(forKey: "\u{E9}")
        try storage.removeItems(toFitCount: 2)
        XCTAssertEqual(try storage.itemsCount(), 2)
        XCTAssertEqual(try storage.itemValue(forKey: "\u{E9}"), testBytes(10, seed: 1), "the most recently read key was trimmed")
        XCTAssertEqual(try storage._checkInvariants(), [])
        let size = try storage.itemsSize()
        storage.close()
        let slots = try KVStorage._instanceSlots(atPath: directory.path)
        XCTAssertEqual(slots?.open, 0)
        XCTAssertEqual(slots?.dead, 0)

        let reopened = try KVStorage(path: directory.path, type: .mixed)
        XCTAssertTrue(reopened.openReport.previousShutdownWasClean)
        XCTAssertEqual(try reopened.itemsCount(), 2)
        XCTAssertEqual(try reopened.itemsSize(), size)
        XCTAssertEqual(try reopened._checkInvariants(), [])
        reopened.close()
    }
}
