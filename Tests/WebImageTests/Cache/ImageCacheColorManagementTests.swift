import Foundation
import TestSupport
import WebImage
import XCTest

/// `ImageCache.colorManagement` through the manager: part of the memory key, so an sRGB decode and a preserved
/// one of the same bytes are two images, each served from memory to its own kind of request.
final class ImageCacheColorManagementTests: XCTestCase {
    private var fixture: PipelineFixture!

    override func setUpWithError() throws { fixture = try PipelineFixture() }
    override func tearDown() { fixture.tearDown(); fixture = nil }

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

    func testColourOptionIsPartOfTheMemoryKey() throws {
        let path = "/usr/share/color/argyll/ref/DisplayP3.icm"
        guard let p3 = FileManager.default.contents(atPath: path) else { throw XCTSkip("\(path) missing (make test-deps)") }
        var chart = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        for x in 0..<8 { chart.setPixel(x: x, y: 0, to: RGBA(r: 200, g: UInt8(x * 30), b: 40)) }
        let tagged = Image(frames: [ImageFrame(buffer: chart)], format: .unknown, loopCount: 1, hasAlpha: false,
                           pixelICCProfile: p3)
        let url = fixture.serve("/p3.png", try tagged.encoded(as: .png), contentType: "image/png")
        let cache = try ImageCache(path: fixture.directory.path)
        let manager = ImageManager(cache: cache, queue: fixture.queue)

        // Given the default (.sRGB): converted pixels, no pixel profile.
        let srgb = load(manager, url)
        XCTAssertEqual(srgb.1, .remote)
        XCTAssertNil(srgb.0?.pixelICCProfile)
        XCTAssertEqual(srgb.0?.colorSpace?.iccProfile, p3)
        XCTAssertNotEqual(srgb.0?.firstFrame.buffer.converted(to: .rgba8), chart)

        // When the cache preserves colours: not the sRGB image from memory, but the file's pixels and profile.
        cache.colorManagement = .preserve
        let preserved = load(manager, url)
        XCTAssertNotEqual(preserved.1, .memoryCache, "a preserved request must not get the sRGB image")
        XCTAssertEqual(preserved.0?.pixelICCProfile, p3)
        XCTAssertEqual(preserved.0?.firstFrame.buffer.converted(to: .rgba8), chart)
        let again = load(manager, url)
        XCTAssertEqual(again.1, .memoryCache)
        XCTAssertEqual(again.0?.pixelICCProfile, p3)

        // Then back to sRGB: the sRGB image is still in memory under its own key.
        cache.colorManagement = .sRGB
        let back = load(manager, url)
        XCTAssertEqual(back.1, .memoryCache)
        XCTAssertNil(back.0?.pixelICCProfile)

        // removeImage(forKey:) removes both variants.
        try cache.removeImage(forKey: manager.cacheKey(for: url), type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: manager.cacheKey(for: url), type: .memory))
        cache.colorManagement = .preserve
        XCTAssertNotEqual(load(manager, url).1, .memoryCache)
    }

    /// A `.target` colour variant names a profile, so it is not one of the fixed decode variants: the index of
    /// variants must find it for `containsImage` and `removeImage`, whichever path stored it.
    func testRemoveImageFindsTargetColourVariants() throws {
        let p3Path = "/usr/share/color/argyll/ref/DisplayP3.icm", adobePath = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
        guard let p3 = FileManager.default.contents(atPath: p3Path),
              let adobe = FileManager.default.contents(atPath: adobePath) else { throw XCTSkip("profiles missing (make test-deps)") }
        var chart = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        for x in 0..<8 { chart.setPixel(x: x, y: 0, to: RGBA(r: 200, g: UInt8(x * 30), b: 40)) }
        let tagged = try Image(frames: [ImageFrame(buffer: chart)], format: .unknown, loopCount: 1, hasAlpha: false,
                               pixelICCProfile: p3).encoded(as: .png)
        let url = fixture.serve("/p3-target.png", tagged, contentType: "image/png")
        let cache = try ImageCache(path: fixture.directory.path)
        cache.colorManagement = .target(adobe)
        let manager = ImageManager(cache: cache, queue: fixture.queue)
        let key = manager.cacheKey(for: url)

        // Given a .target decode through the manager, served from memory the second time.
        let first = load(manager, url)
        XCTAssertEqual(first.1, .remote)
        XCTAssertEqual(first.0?.pixelICCProfile, adobe, "the pixels are in the target profile")
        XCTAssertEqual(load(manager, url).1, .memoryCache)
        XCTAssertTrue(try cache.containsImage(forKey: key, type: .memory), "only the target variant is in memory")

        // When it is removed from memory, then the next request decodes again.
        try cache.removeImage(forKey: key, type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: key, type: .memory))
        XCTAssertNotEqual(load(manager, url).1, .memoryCache, "removeImage left the target variant in memory")

        // The same through the cache's own API (bytes decoded for memory with the cache's settings).
        let other = "target-by-bytes"
        try cache.setImage(nil, imageData: tagged, forKey: other, type: .memory)
        XCTAssertEqual(try cache.getImage(forKey: other, type: .memory)?.pixelICCProfile, adobe)
        try cache.removeImage(forKey: other, type: .memory)
        XCTAssertFalse(try cache.containsImage(forKey: other, type: .memory))
        XCTAssertNil(try cache.getImage(forKey: other, type: .memory))
    }
}
