import Dispatch
import Foundation
import ImageCodec
import TestSupport
@testable import WebImage
import XCTest

/// Memory keys are structured (item 17), `removeImage(forKey:)` removes every variant (item 18), the entry
/// limit follows the cost limit in force (item 15), and a memory entry's cost is what it holds (item 12).
final class ImageCacheKeyTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

    private func load(_ url: URL, options: ImageOptions = [], thumbnail: Int? = nil,
                      transform: ImageTransform? = nil) -> (image: Image?, source: ImageSource, error: WebImageError?) {
        let done = expectation(description: "finished")
        let result = Mutex<(Image?, ImageSource, WebImageError?)>((nil, .none, nil))
        fixture.manager.requestImage(url: url, options: options, thumbnailPixelSize: thumbnail, transform: transform) {
            image, _, source, stage, error in
            guard stage != .progress else { return }
            result.withLock { $0 = (image, source, error) }
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        return result.withLock { $0 }
    }

    // MARK: Item 17: URL fragments vs variants

    /// `a.png#frames=first` is another URL whose fragment happens to read like a variant: it must not get the
    /// one-frame image a `.ignoreAnimatedImage` request of `a.png` stored.
    func testFragmentThatReadsLikeTheFirstFrameVariantGetsItsOwnImage() throws {
        let base = fixture.serve("/anim.png", try TestImages.apng(frames: 3))
        let oneFrame = load(base, options: [.ignoreAnimatedImage])
        XCTAssertEqual(oneFrame.image?.frameCount, 1)

        let lookalike = URL(string: base.absoluteString + "#frames=first")!
        let result = load(lookalike)
        XCTAssertNotEqual(result.source, .memoryCache, "another URL's variant was served from memory")
        XCTAssertEqual(result.image?.frameCount, 3, "the plain request of a URL with a fragment got one frame")
    }

    /// `big.png#thumbnail=40` asked for at full size must not get the 40-pixel thumbnail of `big.png`.
    func testFragmentThatReadsLikeAThumbnailGetsTheFullImage() throws {
        let base = fixture.serve("/big.png", try TestImages.png(width: 200, height: 150))
        XCTAssertEqual(load(base, thumbnail: 40).image.map { max($0.width, $0.height) }, 40)
        let lookalike = URL(string: base.absoluteString + "#thumbnail=40")!
        let result = load(lookalike)
        XCTAssertEqual(result.image?.width, 200, "a full-size request got another URL's thumbnail")
        XCTAssertNotEqual(result.source, .memoryCache)
    }

    /// And a transform id holding `#thumbnail=…` is never another key's thumbnail either.
    func testTransformIDCannotForgeAVariant() throws {
        let url = fixture.serve("/t.png", try TestImages.png(width: 100, height: 50))
        XCTAssertEqual(load(url, thumbnail: 20).image?.width, 20)
        XCTAssertNotEqual(ImageCacheKey(url.absoluteString, thumbnailPixelSize: 20),
                          ImageCacheKey(url.absoluteString + "#thumbnail=20"))
        XCTAssertNotEqual(ImageCacheKey("k", transformID: "x#thumbnail=20"), ImageCacheKey("k#transform=x", thumbnailPixelSize: 20))
        XCTAssertNotEqual(ImageCacheKey("\u{E9}"), ImageCacheKey("e\u{301}"), "keys compare by their bytes")
        XCTAssertEqual(ImageCacheKey("e\u{301}", transformID: "t"), ImageCacheKey("e\u{301}", transformID: "t"))
    }

    // MARK: Item 18: removeImage removes every variant

    func testRemoveImageRemovesThumbnailsAndTransformedImages() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        let url = fixture.serve("/v.png", try TestImages.png(width: 120, height: 90))
        let key = fixture.manager.cacheKey(for: url)
        let square = ImageTransform(id: "square") { image, _ in
            guard let cropped = try? image.firstFrame.buffer.cropped(x: 0, y: 0, width: 10, height: 10) else { return nil }
            return Image(buffer: cropped)
        }
        XCTAssertNotNil(load(url, thumbnail: 30).image)
        XCTAssertNotNil(load(url, thumbnail: 60).image)
        XCTAssertNotNil(load(url, transform: square).image)
        XCTAssertNotNil(load(url, options: [.ignoreAnimatedImage, .ignoreImageDecoding]).image)
        XCTAssertEqual(load(url, thumbnail: 30).source, .memoryCache)
        XCTAssertEqual(cache.memoryCache.totalCount, 4)
        XCTAssertTrue(try cache.containsImage(forKey: key, type: .memory))

        try cache.removeImage(forKey: key, type: .memory)

        XCTAssertEqual(cache.memoryCache.totalCount, 0, "variants of a removed key are still in memory")
        XCTAssertFalse(try cache.containsImage(forKey: key, type: .memory))
        XCTAssertNotEqual(load(url, thumbnail: 30).source, .memoryCache, "a removed thumbnail was served from memory")
        XCTAssertNotEqual(load(url, transform: square).source, .memoryCache, "a removed transform was served from memory")
    }

    /// The index of variants does not outgrow the memory cache: variants the cache evicts on its own are swept.
    func testVariantIndexStaysBoundedWithTheMemoryCache() throws {
        let cache = try ImageCache(path: fixture.directory.path + "-bounded")
        defer { try? FileManager.default.removeItem(atPath: fixture.directory.path + "-bounded") }
        cache.memoryCache.countLimit = 10
        let image = Image(buffer: try TestImages.pattern(width: 4, height: 4))
        for index in 0..<2_000 {
            cache.storeInMemory(image, forKey: ImageCacheKey("k\(index % 50)", thumbnailPixelSize: index))
            XCTAssertLessThanOrEqual(cache.indexedVariantCount, 2 * 10 + VariantIndex.sweepSlack + 1)
        }
        XCTAssertEqual(cache.memoryCache.totalCount, 10)
    }

    // MARK: Item 15: the entry limit follows the cost limit in force

    /// The README's snippet sets `memoryCache.costLimit`; the entry limit must follow (10 % of it), and an image
    /// larger than the whole cache must never go in and flush everything.
    func testEntryLimitFollowsTheCostLimitSetOnTheMemoryCache() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        cache.memoryCache.costLimit = 200_000
        XCTAssertEqual(cache.memoryEntryCostLimit, 20_000)
        let small = Image(buffer: try TestImages.pattern(width: 50, height: 50))    // 10,000 bytes
        let large = Image(buffer: try TestImages.pattern(width: 100, height: 100))  // 40,000 bytes
        let huge = Image(buffer: try TestImages.pattern(width: 300, height: 300))   // 360,000 bytes
        for index in 0..<5 { try cache.setImage(small, forKey: "small\(index)", type: .memory) }
        try cache.setImage(large, forKey: "large", type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: "large", type: .memory), "an image over 10 % of the limit in force was kept")
        XCTAssertEqual(cache.memoryCache.totalCount, 5)

        cache.memoryEntryCostLimit = .max // explicit: no entry limit, but never more than the whole cache
        try cache.setImage(huge, forKey: "huge", type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: "huge", type: .memory), "an image larger than the whole cache was kept")
        XCTAssertEqual(cache.memoryCache.totalCount, 5, "an image larger than the cache flushed it")
        try cache.setImage(large, forKey: "large", type: .memory)
        XCTAssertTrue(try cache.containsImage(forKey: "large", type: .memory), "the explicit entry limit is ignored")
    }

    /// Limits whose entry limit is the default share follow the cost limit; any other value is fixed.
    func testEntryLimitFromLimitsIsDerivedOnlyWhenItIsTheDefaultShare() throws {
        var limits = ImageCacheLimits(processMemory: 1 << 30)
        let derived = try ImageCache(path: fixture.directory.path + "-derived", limits: limits)
        derived.memoryCache.costLimit = 1_000_000
        XCTAssertEqual(derived.memoryEntryCostLimit, 100_000)
        limits.memoryEntryCostLimit = 12_345
        let fixed = try ImageCache(path: fixture.directory.path + "-fixed", limits: limits)
        fixed.memoryCache.costLimit = 1_000_000
        XCTAssertEqual(fixed.memoryEntryCostLimit, 12_345)
        let unlimited = try ImageCache(path: fixture.directory.path + "-none", limits: .none)
        XCTAssertEqual(unlimited.memoryEntryCostLimit, .max)
        unlimited.memoryCache.costLimit = 1_000_000
        XCTAssertEqual(unlimited.memoryEntryCostLimit, 100_000)
        for suffix in ["-derived", "-fixed", "-none"] { try? FileManager.default.removeItem(atPath: fixture.directory.path + suffix) }
    }

    // MARK: Item 12: what a memory entry holds is what it costs

    /// Thumbnails and transformed images do not keep the encoded original; a full-size image keeps it and its
    /// cost counts it. The bytes the cached images really hold (pixels + originals + keys) never exceed what the
    /// cache counted.
    func testThumbnailsDropTheOriginalAndTheCostCountsWhatIsHeld() throws {
        let cache = try XCTUnwrap(fixture.manager.cache)
        var originals = 0
        var thumbnails: [Image] = []
        for index in 0..<20 {
            let data = try TestImages.jpeg(width: 400, height: 300, seed: index)
            originals += data.count
            let url = fixture.serve("/photo\(index).jpg", data, contentType: "image/jpeg")
            let thumbnail = try XCTUnwrap(load(url, thumbnail: 40).image)
            XCTAssertNil(thumbnail.originalData, "a thumbnail kept its whole original")
            thumbnails.append(thumbnail)
        }
        let transformed = try XCTUnwrap(load(fixture.serve("/t.jpg", try TestImages.jpeg(width: 400, height: 300)),
                                             transform: ImageTransform(id: "same") { image, _ in image }).image)
        XCTAssertNil(transformed.originalData, "a transform's input kept its whole original")
        let fullURL = fixture.serve("/full.jpg", try TestImages.jpeg(width: 400, height: 300, seed: 99), contentType: "image/jpeg")
        let full = try XCTUnwrap(load(fullURL).image)
        let fullOriginal = try XCTUnwrap(full.originalData, "a full-size image keeps its original (the CLI writes it out)")

        func held(_ images: [Image]) -> Int { images.reduce(0) { $0 + $1.decodedByteCount + ($1.originalData?.count ?? 0) } }
        let total = held(thumbnails + [transformed, full])
        print("THUMBCOST held=\(total) counted=\(cache.memoryCache.totalCost) thumbnails=\(held(thumbnails)) originals=\(originals)")
        XCTAssertEqual(cache.memoryCache.totalCount, 22)
        XCTAssertGreaterThanOrEqual(cache.memoryCache.totalCost, total, "the cache counts less than its images hold")
        XCTAssertGreaterThanOrEqual(cache.memoryCache.totalCost, full.decodedByteCount + fullOriginal.count)
        XCTAssertLessThan(held(thumbnails), originals / 2, "thumbnails hold their originals")
    }
}
