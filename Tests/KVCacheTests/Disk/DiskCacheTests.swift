@testable import KVCache
import Synchronization
import XCTest

final class DiskCacheTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testOneLiveInstancePerPath() throws {
        let first = try DiskCache(path: directory.path, inlineThreshold: 100)
        let second = try DiskCache(path: directory.path + "/./", inlineThreshold: 5)
        XCTAssertTrue(first.core === second.core)
        XCTAssertEqual(second.inlineThreshold, 100)
        first.countLimit = 7
        XCTAssertEqual(second.countLimit, 7)
        try first.setObject(Data([1]), forKey: "k")
        XCTAssertEqual(try second.object(forKey: "k"), Data([1]))
    }

    func testThresholdSplitsInlineAndFileValuesWithMD5Names() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 1_000)
        try cache.setObject(testBytes(1_000, seed: 1), forKey: "small", extendedData: Data("2x".utf8))
        try cache.setObject(testBytes(1_001, seed: 2), forKey: "large")
        XCTAssertEqual(try directory.files(in: "data"), [MD5.hex("large")])
        XCTAssertEqual(try cache.object(forKey: "small"), testBytes(1_000, seed: 1))
        XCTAssertEqual(try cache.object(forKey: "large"), testBytes(1_001, seed: 2))
        XCTAssertEqual(try cache.extendedData(forKey: "small"), Data("2x".utf8))
        XCTAssertTrue(try cache.setExtendedData(Data([3]), forKey: "large"))
        XCTAssertEqual(try cache.entry(forKey: "large")?.extendedData, Data([3]))
        XCTAssertEqual(try cache.totalCount(), 2)
        // The cost counts keys, extended data, row overhead and whole 4 KiB blocks of files; the values are 2,001 bytes.
        XCTAssertEqual(try cache.totalCost(), KVStorage.cost(keyBytes: 5, valueBytes: 1_000, isFile: false, extendedDataBytes: 2)
                       + KVStorage.cost(keyBytes: 5, valueBytes: 1_001, isFile: true, extendedDataBytes: 1))
        XCTAssertEqual(try cache.usage().totalBytes, 2_001)
        XCTAssertTrue(try cache.containsObject(forKey: "small"))
        try cache.setObject(nil, forKey: "small")
        XCTAssertFalse(try cache.containsObject(forKey: "small"))
    }

    func testCustomFilenameAndArchiver() throws {
        struct Meta: Codable, Equatable, Sendable { var scale: Int; var etag: String }
        let cache = try DiskCache(path: directory.path, inlineThreshold: 0)
        cache.filename = { "custom-" + $0 }
        try cache.setObject(Meta(scale: 2, etag: "abc"), forKey: "m", archiver: .json)
        XCTAssertEqual(try cache.object(forKey: "m", archiver: DiskCacheArchiver<Meta>.json), Meta(scale: 2, etag: "abc"))
        XCTAssertEqual(try directory.files(in: "data"), ["custom-m"])
        try cache.setObject(Data("not json".utf8), forKey: "bad")
        XCTAssertThrowsError(try cache.object(forKey: "bad", archiver: DiskCacheArchiver<Meta>.json)) { error in
            guard case KVCacheError.archiving = error else { return XCTFail("\(error)") }
        }
    }

    func testTrimByCountCostAgeAndLimits() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 50)
        for i in 0..<10 { try cache.setObject(testBytes(100, seed: i), forKey: "k\(i)") }
        _ = try cache.object(forKey: "k0")
        try cache.trim(toCount: 8)
        XCTAssertTrue(try cache.containsObject(forKey: "k0"))
        XCTAssertFalse(try cache.containsObject(forKey: "k1"))
        let each = KVStorage.cost(keyBytes: 2, valueBytes: 100, isFile: true, extendedDataBytes: 0)
        try cache.trim(toCost: 5 * each + each / 2)
        XCTAssertEqual(try cache.totalCost(), 5 * each)
        XCTAssertEqual(try cache.totalCount(), 5)
        cache.countLimit = 3
        try cache.trimToLimits()
        XCTAssertEqual(try cache.totalCount(), 3)
        XCTAssertTrue(try cache.containsObject(forKey: "k0"))
        try cache.trim(toAge: 3_600)
        XCTAssertEqual(try cache.totalCount(), 3)
        try cache.trim(toAge: 0)
        XCTAssertEqual(try cache.totalCount(), 0)
        cache.countLimit = .max
        cache.freeDiskSpaceLimit = .max // impossible to satisfy: trims everything
        cache.freeDiskSpaceVolumeShare = 1 // (the default caps the floor at 5 % of the volume)
        try cache.setObject(testBytes(10, seed: 1), forKey: "x")
        try cache.trimToLimits()
        XCTAssertEqual(try cache.totalCount(), 0)
    }

    func testRemoveAllWithProgressAndTrashIsEmptiedInTheBackground() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 10)
        for i in 0..<70 { try cache.setObject(testBytes(20, seed: i), forKey: "k\(i)") }
        let reports = Mutex<[Int]>([])
        try cache.removeAllObjects { removed, total in
            XCTAssertEqual(total, 70)
            reports.withLock { $0.append(removed) }
        }
        XCTAssertEqual(reports.withLock { $0 }, [64, 70])
        XCTAssertEqual(try cache.totalCount(), 0)
        XCTAssertEqual(try directory.files(in: "data"), [])
        // The trash queue is serial: a marker block queued after the sweep runs once it is done.
        let swept = expectation(description: "trash emptied")
        cache.core.scheduleEmptyTrash()
        DispatchQueue(label: "wait").async {
            cache.core.waitForTrashSweep()
            swept.fulfill()
        }
        wait(for: [swept], timeout: 10)
        XCTAssertEqual(try directory.files(in: "trash"), [])
    }

    func testCompletionHandlerAndAsyncAPIs() async throws {
        let cache = try DiskCache(path: directory.path)
        try await cache.setObject(Data([1, 2]), forKey: "a")
        let value = try await cache.object(forKey: "a")
        XCTAssertEqual(value, Data([1, 2]))
        let contains = try await cache.containsObject(forKey: "a")
        XCTAssertTrue(contains)
        let count = try await cache.totalCount()
        XCTAssertEqual(count, 1)
        let done = expectation(description: "completion")
        cache.object(forKey: "a") { result in
            XCTAssertEqual(try? result.get(), Data([1, 2]))
            done.fulfill()
        }
        let counted = expectation(description: "count completion")
        cache.totalCount { result in
            XCTAssertEqual(try? result.get(), 1)
            counted.fulfill()
        }
        let trimmed = expectation(description: "trim completion")
        cache.trim(toCount: 5) { result in
            XCTAssertNotNil(try? result.get())
            trimmed.fulfill()
        }
        await fulfillment(of: [done, counted, trimmed], timeout: 10)
        try await cache.trim(toCost: 1)
        let cost = try await cache.totalCost()
        XCTAssertEqual(cost, 0)
        try await cache.setObject(Data([1, 2]), forKey: "a")
        try await cache.removeObject(forKey: "a")
        let after = try await cache.object(forKey: "a")
        XCTAssertNil(after)
    }
}
