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
}
