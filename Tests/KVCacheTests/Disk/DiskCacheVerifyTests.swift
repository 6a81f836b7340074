@testable import KVCache
import XCTest

/// `DiskCache.usage()`, `allKeys()` and `verify()`.
final class DiskCacheVerifyTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testUsageSplitsInlineAndFileValues() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 100)
        XCTAssertEqual(try cache.usage(), DiskCacheUsage())
        try cache.setObject(Data(repeating: 1, count: 10), forKey: "small")
        try cache.setObject(Data(repeating: 2, count: 20), forKey: "small2")
        try cache.setObject(Data(repeating: 3, count: 500), forKey: "large")
        let usage = try cache.usage()
        XCTAssertEqual(usage.entryCount, 3)
        XCTAssertEqual(usage.inlineCount, 2)
        XCTAssertEqual(usage.inlineBytes, 30)
        XCTAssertEqual(usage.fileCount, 1)
        XCTAssertEqual(usage.fileBytes, 500)
        XCTAssertEqual(usage.totalBytes, 530)
        let oldest = try XCTUnwrap(usage.oldestAccess), newest = try XCTUnwrap(usage.newestAccess)
        XCTAssertLessThanOrEqual(oldest, newest)
    }

    func testAllKeysListsEveryEntryLeastRecentlyUsedFirst() throws {
        let cache = try DiskCache(path: directory.path)
        for key in ["a", "b", "c"] { try cache.setObject(Data(key.utf8), forKey: key) }
        _ = try cache.object(forKey: "a") // "a" becomes the most recently used
        XCTAssertEqual(try cache.allKeys(), ["b", "c", "a"])
    }

    func testVerifyPassesOnASoundStore() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 100)
        try cache.setObject(Data(repeating: 1, count: 10), forKey: "inline")
        try cache.setObject(Data(repeating: 2, count: 500), forKey: "file")
        let report = try cache.verify()
        XCTAssertEqual(report.quickCheck, ["ok"])
        XCTAssertEqual(report.usage.entryCount, 2)
        XCTAssertEqual(report.missingFiles, [])
        XCTAssertEqual(report.sizeMismatches, [])
        XCTAssertEqual(report.unreferencedFiles, [])
        XCTAssertTrue(report.isHealthy)
    }

    func testVerifyReportsMissingAndResizedFilesAndStrayFilesWithoutRepairing() throws {
        // Given a store with two file values, one deleted and one truncated behind its back, and a stray file
        let cache = try DiskCache(path: directory.path, inlineThreshold: 0)
        try cache.setObject(Data(repeating: 1, count: 300), forKey: "gone")
        try cache.setObject(Data(repeating: 2, count: 300), forKey: "short")
        let data = directory.path + "/data/"
        try FileManager.default.removeItem(atPath: data + MD5.hex("gone"))
        try Data(repeating: 2, count: 10).write(to: URL(fileURLWithPath: data + MD5.hex("short")))
        try Data([9]).write(to: URL(fileURLWithPath: data + "stray"))

        // When it is verified
        let report = try cache.verify()

        // Then each problem is named, and nothing was removed
        XCTAssertEqual(report.quickCheck, ["ok"])
        XCTAssertEqual(report.missingFiles, ["gone"])
        XCTAssertEqual(report.sizeMismatches, ["short"])
        XCTAssertEqual(report.unreferencedFiles, ["stray"])
        XCTAssertFalse(report.isHealthy)
        XCTAssertEqual(try cache.usage().entryCount, 2, "verify repairs nothing")
    }
}
