import Foundation
import WebImage
import XCTest

/// `ImageCache` is bounded by default (issue 13): memory and disk limits, and the per-entry cap.
final class ImageCacheLimitsTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachelimits-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: directory)
    }

    func testANewCacheHasTheDefaultLimits() throws {
        let cache = try ImageCache(path: directory.path)
        let defaults = ImageCacheLimits.default
        XCTAssertGreaterThan(defaults.memoryCostLimit, 0)
        XCTAssertLessThanOrEqual(defaults.memoryCostLimit, 768 << 20)
        XCTAssertEqual(cache.memoryCache.costLimit, defaults.memoryCostLimit)
        XCTAssertEqual(cache.memoryEntryCostLimit, defaults.memoryEntryCostLimit)
        XCTAssertEqual(cache.memoryCache.ageLimit, 12 * 3600)
        XCTAssertEqual(cache.diskCache!.costLimit, 1 << 30)
        XCTAssertEqual(cache.diskCache!.ageLimit, 7 * 24 * 3600)
        XCTAssertEqual(cache.diskCache!.freeDiskSpaceLimit, 1 << 30)
    }

    func testAnImageOverTheEntryCapIsDeliveredButNotKeptInMemory() throws {
        var limits = ImageCacheLimits.default
        limits.memoryCostLimit = 100_000
        limits.memoryEntryCostLimit = 10_000
        let cache = try ImageCache(path: directory.path, limits: limits)
        let small = Image(frames: [ImageFrame(buffer: try PixelBuffer(width: 40, height: 40))], format: .png, loopCount: 1, hasAlpha: false)
        let large = Image(frames: [ImageFrame(buffer: try PixelBuffer(width: 60, height: 60))], format: .png, loopCount: 1, hasAlpha: false)
        try cache.setImage(small, forKey: "k", type: .memory)
        XCTAssertTrue(try cache.containsImage(forKey: "k", type: .memory), "6,400 bytes fit the 10,000-byte entry cap")
        try cache.setImage(large, forKey: "k", type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: "k", type: .memory), "14,400 bytes are over the cap; the stale one is gone")
        XCTAssertEqual(cache.memoryCache.totalCost, 0)
    }
}
