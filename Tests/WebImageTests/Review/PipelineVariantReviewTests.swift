import Dispatch
import Foundation
import TestSupport
import WebImage
import XCTest

/// Review: the decode variant in the memory key vs the cache's key-based API.
final class PipelineVariantReviewTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    private func load(_ manager: ImageManager, _ url: URL) -> (Image?, ImageSource) {
        let done = expectation(description: "finished")
        let result = Mutex<(Image?, ImageSource)>((nil, .none))
        manager.requestImage(url: url) { image, _, source, stage, _ in
            guard stage == .finished else { return }
            result.withLock { $0 = (image, source) }
            done.fulfill()
        }
        wait(for: [done], timeout: 20)
        return result.withLock { $0 }
    }

    /// With a cache-wide reduced variant (`allowAnimatedImage = false`), every manager request caches its image
    /// under `key#frames=first`. `removeImage(forKey: key)` must still make the next request miss memory
    /// (before the variant merge the plain key was the only one a plain request used).
    func testRemoveImageForKeyRemovesWhatTheManagerServesFromMemory() throws {
        let cache = try ImageCache(path: fixture.directory.path)
        cache.allowAnimatedImage = false
        let manager = ImageManager(cache: cache, queue: fixture.queue)
        let url = fixture.serve("/plain", DecodeBombs.grayJPEG(width: 32, height: 32), contentType: "image/jpeg")
        let first = load(manager, url)
        XCTAssertNotNil(first.0)
        XCTAssertEqual(first.1, .remote)

        let key = manager.cacheKey(for: url)
        XCTAssertTrue(try cache.containsImage(forKey: key, type: .memory),
                      "the image the manager just cached in memory is not found under its cache key")
        try cache.removeImage(forKey: key)

        let second = load(manager, url)
        XCTAssertNotNil(second.0)
        XCTAssertNotEqual(second.1, .memoryCache, "an image removed with removeImage(forKey:) is still served from memory")
    }

    /// `getImage(forKey:)` promotes a disk hit to memory under `key + variant suffix` but looks memory up under
    /// the plain key: with a reduced cache-wide variant the promotion is never found by the same API.
    func testGetImagePromotionIsFoundByTheNextGetImage() throws {
        let cache = try ImageCache(path: fixture.directory.path)
        cache.decodeForDisplay = false
        try cache.setImage(nil, imageData: DecodeBombs.grayJPEG(width: 32, height: 32), forKey: "k", type: .disk)
        XCTAssertNotNil(try cache.getImage(forKey: "k"))
        XCTAssertNotNil(try cache.getImage(forKey: "k", type: .memory), "the disk hit just promoted to memory is not found there")
    }
}

/// Review: exact (byte-wise) keys in the caches vs the manager's in-flight registry.
final class PipelineExactKeyReviewTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil } // XCTest keeps test cases alive: free the cache

    /// Two URLs whose cache keys are distinct byte strings but canonically equivalent ("\u{E9}" and
    /// "e\u{301}"): the disk and memory caches keep them apart (ExactKey), so two requests in flight at the
    /// same time must not share one task and one image.
    func testCanonicallyEquivalentCacheKeysDoNotShareInFlightWork() throws {
        let budget = DecodeBudget(capacity: 1)
        let manager = ImageManager(cache: try ImageCache(path: fixture.directory.path), queue: fixture.queue,
                                   decodeBudget: budget)
        manager.cacheKeyFilter = { url in url.lastPathComponent == "a" ? "\u{E9}" : "e\u{301}" }
        let a = fixture.serve("/a", DecodeBombs.grayJPEG(width: 16, height: 16), contentType: "image/jpeg")
        let b = fixture.serve("/b", DecodeBombs.grayJPEG(width: 32, height: 32), contentType: "image/jpeg")
        // Hold the budget so the first load is certainly still in flight when the second is made.
        let held = Mutex<DecodeBudget.Reservation?>(nil)
        budget.run(cost: 1, on: .global()) { reservation in held.withLock { $0 = reservation } }
        let widths = Mutex<[String: Int]>([:])
        let finished = expectation(description: "both finish")
        finished.expectedFulfillmentCount = 2
        for url in [a, b] {
            manager.requestImage(url: url, options: [.ignoreDiskCache]) { image, _, _, stage, _ in
                guard stage == .finished else { return }
                widths.withLock { $0[url.path] = image?.width ?? -1 }
                finished.fulfill()
            }
        }
        held.withLock { $0 }?.release()
        wait(for: [finished], timeout: 20)
        XCTAssertEqual(widths.withLock { $0 }, ["/a": 16, "/b": 32], "/b was served /a's image")
    }
}
