import Fetcher
import Foundation
@testable import KVCache
import TestSupport
@testable import WebImage
import XCTest

/// Item 11 through the pipeline: the originals cache of an image service, fed long URLs with long validators
/// (within the caps), trimmed to its limit, holds on disk — manifest, WAL after a checkpoint, files — at most
/// twice that limit. Before, the limit counted the values only (a few hundred bytes each) and nothing went.
final class ImageCacheDiskAccountingTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

    /// Allocated bytes (as `du` counts) of every file under `path`.
    private func diskUsage(of path: String) -> Int64 {
        var total: Int64 = 0
        var paths = [path]
        if let walker = FileManager.default.enumerator(atPath: path) {
            while let relative = walker.nextObject() as? String { paths.append(path + "/" + relative) }
        }
        for file in paths {
            var info = stat()
            if lstat(file, &info) == 0 { total += Int64(info.st_blocks) * 512 }
        }
        return total
    }

    func testOriginalsWithLongURLsAndValidatorsStayWithinTheLimitOnDisk() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        let disk = try XCTUnwrap(cache.diskCache)
        let png = try TestImages.png(width: 2, height: 2)
        let count = 150
        func path(_ index: Int) -> String { "/img/\(index)/" + String(String(repeating: "segment-\(index)-", count: 400).prefix(4_000)) }
        for index in 0..<count {
            let path = path(index)
            var response = HTTPTestResponse.bytes(png, contentType: "image/png")
            // The longest ETag kept (EntityTag.maximumLength): a longer one is not a validator at all.
            response.etag = "\"" + String(repeating: "\(index % 10)", count: EntityTag.maximumLength - 2) + "\""
            response.lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
            fixture.server.route(path, response)
            XCTAssertNotNil(fixture.load(fixture.server.url(path)).image)
        }
        cache.waitForPendingWrites()
        XCTAssertEqual(try disk.totalCount(), count)
        XCTAssertNotNil(try cache.getMetadata(forKey: fixture.server.url(path(0)).absoluteString)?.http?.etag,
                        "validators within the cap are kept")
        let before = try disk.totalCost()

        let limit: Int64 = 512 << 10
        disk.costLimit = limit
        try disk.trimToLimits()
        try disk.core.withStorage { (storage) throws(KVCacheError) in storage.endReadSnapshot() }
        let database = try SQLiteDatabase(path: disk.path + "/manifest.sqlite", busyTimeout: 5_000, faults: nil, create: false)
        _ = try database.textRows("PRAGMA wal_checkpoint(TRUNCATE)")
        database.close()

        let onDisk = diskUsage(of: disk.path)
        print("ORIGINALS before=\(before) cost=\(try disk.totalCost()) kept=\(try disk.totalCount()) du=\(onDisk) limit=\(limit)")
        XCTAssertGreaterThan(before, Int64(count) * 12_000, "keys and validators are counted")
        XCTAssertLessThanOrEqual(try disk.totalCost(), limit)
        XCTAssertLessThanOrEqual(onDisk, 2 * limit, "the originals hold \(onDisk) bytes on disk after a trim to \(limit)")
    }
}
