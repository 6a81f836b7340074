@testable import KVCache
import Foundation
import XCTest

/// What a disk cache's cost limit counts against what the folder really holds: keys and extended data count,
/// both are capped, and a trim gives the manifest's freed pages back (review item 11). Also: the folder is
/// made with its parents (item 16).
final class KVCacheKeyCostTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    /// A URL-like key of exactly `length` bytes for entry `index` (no two alike, nothing compressible).
    private func longKey(_ index: Int, length: Int) -> String {
        let head = "https://images.example.com/\(index)/"
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let tail = testBytes(length, seed: index).map { alphabet[Int($0) % alphabet.count] }
        return head + String(tail.prefix(length - head.utf8.count))
    }

    /// Bytes the folder takes on disk (allocated blocks, as `du` counts them), every file in it included.
    static func diskUsage(of path: String) -> Int64 {
        var total: Int64 = 0
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var paths = [path]
        while let relative = walker.nextObject() as? String { paths.append(path + "/" + relative) }
        for file in paths {
            var info = stat()
            if lstat(file, &info) == 0 { total += Int64(info.st_blocks) * 512 }
        }
        return total
    }

    /// Copies the WAL back into the manifest and truncates it (what `du` after a checkpoint sees).
    static func checkpointTruncating(_ cache: DiskCache) throws {
        try cache.core.withStorage { (storage) throws(KVCacheError) in storage.endReadSnapshot() }
        let database = try SQLiteDatabase(path: cache.path + "/manifest.sqlite", busyTimeout: 5_000, faults: nil, create: false)
        defer { database.close() }
        _ = try database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Given many entries with long keys and long extended data (tiny values: what the review stored, inside
    /// the new caps), each read once (an access-log row each), when the cache is trimmed to 1 MiB, then the
    /// folder — manifest, WAL, value files, lock files — takes at most twice the limit on disk. Before, the
    /// limit counted the 43-byte values only: nothing was trimmed and the folder stayed at ~10 MB.
    func testTrimToCostBoundsTheFolderOnDiskWithLongKeysAndMetadata() throws {
        let cache = try DiskCache(path: directory.path)
        let limit: Int64 = 1 << 20
        let keyLength = 6_000, extendedLength = 12_000, count = 400
        for index in 0..<count {
            let key = longKey(index, length: keyLength)
            try cache.setObject(testBytes(43, seed: index), forKey: key, extendedData: testBytes(extendedLength, seed: -index))
            XCTAssertNotNil(try cache.object(forKey: key))
        }
        let before = try cache.totalCost()
        XCTAssertGreaterThanOrEqual(before, Int64(count * (3 * keyLength + extendedLength)), "keys and extended data are counted")

        cache.costLimit = limit
        try cache.trimToLimits()
        try Self.checkpointTruncating(cache)

        let kept = try cache.totalCount()
        let cost = try cache.totalCost()
        let onDisk = Self.diskUsage(of: directory.path)
        print("KEYCOST kept=\(kept) cost=\(cost) limit=\(limit) du=\(onDisk) before=\(before)")
        XCTAssertLessThanOrEqual(cost, limit)
        XCTAssertGreaterThan(kept, 0, "the trim keeps what fits")
        XCTAssertLessThanOrEqual(onDisk, 2 * limit, "the folder holds \(onDisk) bytes after a trim to \(limit)")
    }

    /// The cost counted per entry is the formula documented on `costLimit`, kept by the triggers through
    /// inserts, replaces (inline ↔ file), extended-data updates and removals.
    func testTotalCostFollowsKeysExtendedDataAndFileBlocks() throws {
        let cache = try DiskCache(path: directory.path, inlineThreshold: 100)
        func cost(_ key: String, _ value: Int, file: Bool, _ extended: Int) -> Int64 {
            KVStorage.cost(keyBytes: key.utf8.count, valueBytes: Int64(value), isFile: file, extendedDataBytes: extended)
        }
        try cache.setObject(testBytes(50, seed: 1), forKey: "inline", extendedData: testBytes(30, seed: 2))
        XCTAssertEqual(try cache.totalCost(), cost("inline", 50, file: false, 30))
        try cache.setObject(testBytes(5_000, seed: 3), forKey: "filé", extendedData: nil)
        XCTAssertEqual(try cache.totalCost(), cost("inline", 50, file: false, 30) + cost("filé", 5_000, file: true, 0))
        XCTAssertEqual(cost("filé", 5_000, file: true, 0), 8_192 + 3 * 5 + 128, "a file counts whole 4 KiB blocks")
        try cache.setExtendedData(testBytes(700, seed: 4), forKey: "filé")
        try cache.setObject(testBytes(10, seed: 5), forKey: "inline") // a replace drops the old extended data
        XCTAssertEqual(try cache.totalCost(), cost("inline", 10, file: false, 0) + cost("filé", 5_000, file: true, 700))
        try cache.setObject(testBytes(20, seed: 6), forKey: "filé") // file → inline
        XCTAssertEqual(try cache.totalCost(), cost("inline", 10, file: false, 0) + cost("filé", 20, file: false, 0))
        try cache.removeObject(forKey: "inline")
        try cache.removeObject(forKey: "filé")
        XCTAssertEqual(try cache.totalCost(), 0)
        XCTAssertEqual(try cache.totalCount(), 0)
    }

    /// Keys and extended data over their caps are refused with a typed error, store nothing and keep the
    /// previous value; exactly at the cap they are stored.
    func testKeysAndExtendedDataOverTheirCapsAreRefused() throws {
        let cache = try DiskCache(path: directory.path)
        cache.keyLengthLimit = 100
        cache.extendedDataSizeLimit = 50
        let atCap = String(repeating: "k", count: 100)
        let overCap = String(repeating: "k", count: 101)
        try cache.setObject(Data([1]), forKey: atCap, extendedData: testBytes(50, seed: 1))
        XCTAssertEqual(try cache.object(forKey: atCap), Data([1]))
        XCTAssertThrowsError(try cache.setObject(Data([2]), forKey: overCap)) { error in
            XCTAssertEqual(error as? KVCacheError, .keyTooLong(length: 101, limit: 100))
        }
        XCTAssertFalse(try cache.containsObject(forKey: overCap))
        XCTAssertThrowsError(try cache.setObject(Data([3]), forKey: atCap, extendedData: testBytes(51, seed: 2))) { error in
            XCTAssertEqual(error as? KVCacheError, .extendedDataTooLarge(size: 51, limit: 50))
        }
        XCTAssertThrowsError(try cache.setExtendedData(testBytes(51, seed: 3), forKey: atCap)) { error in
            XCTAssertEqual(error as? KVCacheError, .extendedDataTooLarge(size: 51, limit: 50))
        }
        XCTAssertEqual(try cache.object(forKey: atCap), Data([1]), "a refused save keeps the previous value")
        XCTAssertEqual(try cache.extendedData(forKey: atCap), testBytes(50, seed: 1))
        // Multi-byte characters count as their UTF-8 bytes.
        XCTAssertThrowsError(try cache.setObject(Data([4]), forKey: String(repeating: "é", count: 51)))
        XCTAssertEqual(DiskCache.defaultKeyLengthLimit, 8_192)
        XCTAssertEqual(try DiskCache(path: directory.path + "/other").keyLengthLimit, 8_192)
    }

    /// `Cache` (memory + disk) refuses a key over the disk's cap before it touches memory: nothing is held.
    func testCacheRefusesAnOverlongKeyInMemoryToo() throws {
        let cache = try Cache<Data>(path: directory.path)
        cache.diskCache.keyLengthLimit = 10
        XCTAssertThrowsError(try cache.setObject(Data([1]), forKey: String(repeating: "k", count: 11), cost: 1)) { error in
            XCTAssertEqual(error as? KVCacheError, .keyTooLong(length: 11, limit: 10))
        }
        XCTAssertEqual(cache.memoryCache.totalCount, 0)
        try cache.setObject(Data([1]), forKey: String(repeating: "k", count: 10), cost: 1)
        XCTAssertEqual(cache.memoryCache.totalCount, 1)
    }

    /// A folder whose parents do not exist is made with them (`mkdir -p`), each new folder 0700; the parents
    /// that existed keep their mode. A path through a regular file is a typed error.
    func testFolderIsMadeWithItsParentsOwnerOnly() throws {
        let base = directory.path + "/home/.cache/webimage"
        XCTAssertEqual(chmod(directory.path, 0o755), 0)
        let cache = try DiskCache(path: base + "/images")
        try cache.setObject(Data([1]), forKey: "k")
        XCTAssertEqual(try cache.object(forKey: "k"), Data([1]))
        for folder in [directory.path + "/home", directory.path + "/home/.cache", base, base + "/images",
                       base + "/images/data"] {
            var info = stat()
            XCTAssertEqual(stat(folder, &info), 0, folder)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, "\(folder) is not owner-only")
        }
        var info = stat()
        XCTAssertEqual(stat(directory.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o755, "an existing parent keeps its mode")

        FileManager.default.createFile(atPath: directory.path + "/file", contents: Data([0]))
        XCTAssertThrowsError(try DiskCache(path: directory.path + "/file/cache")) { error in
            guard case .io(let code, _, _)? = error as? KVCacheError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, ENOTDIR)
        }
        XCTAssertEqual(FileIO.parent(of: "/a/b/"), "/a")
        XCTAssertEqual(FileIO.parent(of: "/a"), "/")
        XCTAssertEqual(FileIO.parent(of: "a"), "")
        XCTAssertEqual(FileIO.parent(of: "a//b"), "a")
    }
}
