@testable import KVCache
import XCTest

final class CacheTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDownWithError() throws { try directory.remove() }

    func testReadsMemoryThenDiskAndPromotes() throws {
        let cache = try Cache<Data>(path: directory.path)
        try cache.setObject(Data([1]), forKey: "a", cost: 1)
        XCTAssertTrue(cache.memoryCache.containsObject(forKey: "a"))
        XCTAssertTrue(try cache.diskCache.containsObject(forKey: "a"))
        cache.memoryCache.removeAllObjects()
        XCTAssertTrue(try cache.containsObject(forKey: "a"))
        XCTAssertEqual(try cache.object(forKey: "a"), Data([1]))
        XCTAssertTrue(cache.memoryCache.containsObject(forKey: "a"), "a disk hit is promoted to memory")
        XCTAssertEqual(cache.memoryCache.totalCost, 1)
        try cache.removeObject(forKey: "a")
        XCTAssertFalse(try cache.containsObject(forKey: "a"))
        XCTAssertNil(try cache.object(forKey: "a"))
    }

    func testCodableValuesAndAsyncAPI() async throws {
        struct Point: Codable, Equatable, Sendable { var x: Int; var y: Int }
        let cache = try Cache<Point>(path: directory.path, archiver: .json)
        try await cache.setObject(Point(x: 1, y: 2), forKey: "p")
        cache.memoryCache.removeAllObjects()
        let point = try await cache.object(forKey: "p")
        XCTAssertEqual(point, Point(x: 1, y: 2))
        try cache.removeAllObjects()
        let gone = try await cache.object(forKey: "p")
        XCTAssertNil(gone)
    }
}
