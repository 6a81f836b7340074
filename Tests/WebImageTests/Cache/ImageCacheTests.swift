import Foundation
import WebImage
import XCTest

final class ImageCacheTests: XCTestCase {
    var directory: URL!
    var cache: ImageCache!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagecache-\(UUID().uuidString)")
        cache = try ImageCache(path: directory.path)
    }

    override func tearDownWithError() throws {
        cache = nil // XCTest keeps test cases alive: close the store (its last handle) before its folder goes
        try FileManager.default.removeItem(at: directory)
    }

    private func image(opaque: Bool) throws -> Image {
        var buffer = try PixelBuffer(width: 8, height: 6)
        for y in 0..<6 { for x in 0..<8 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 30), g: UInt8(y * 40), b: 90, a: opaque ? 255 : 128)) } }
        return Image(buffer: buffer)
    }

    func testAnImageAloneIsEncodedPNGWithAlphaAndJPEGWithout() throws {
        try cache.setImage(try image(opaque: false), forKey: "alpha")
        try cache.setImage(try image(opaque: true), forKey: "opaque")
        XCTAssertEqual(ImageFormat.sniff(try XCTUnwrap(try cache.getImageData(forKey: "alpha"))), .png)
        XCTAssertEqual(ImageFormat.sniff(try XCTUnwrap(try cache.getImageData(forKey: "opaque"))), .jpeg)
    }

    func testOriginalBytesAreKeptAndDiskHitsArePromotedToMemory() throws {
        var encoder = ImageEncoder(format: .gif, loopCount: 0)
        encoder.addFrame(try PixelBuffer(width: 4, height: 4), duration: 0.1)
        encoder.addFrame(try image(opaque: true).firstFrame.buffer.cropped(x: 0, y: 0, width: 4, height: 4), duration: 0.2)
        let gif = try encoder.encode()
        try cache.setImage(nil, imageData: gif, forKey: "anim", type: .disk)
        XCTAssertFalse(try cache.containsImage(forKey: "anim", type: .memory))
        let loaded = try XCTUnwrap(try cache.getImage(forKey: "anim"))
        XCTAssertEqual(loaded.frameCount, 2, "animations keep every frame on disk")
        XCTAssertTrue(try cache.containsImage(forKey: "anim", type: .memory), "a disk hit is promoted to memory")
        XCTAssertEqual(try cache.getImageData(forKey: "anim"), gif)
        cache.allowAnimatedImage = false
        cache.memoryCache.removeAllObjects()
        XCTAssertEqual(try cache.getImage(forKey: "anim")?.frameCount, 1)
    }

    func testMetadataRoundTripAndRemoval() throws {
        let policy = HTTPCachePolicy(headers: ["ETag": "\"x\"", "Cache-Control": "max-age=60"])
        try cache.setImage(try image(opaque: true), forKey: "k", metadata: ImageCacheMetadata(scale: 2, http: policy))
        let metadata = try XCTUnwrap(try cache.getMetadata(forKey: "k"))
        XCTAssertEqual(metadata.scale, 2)
        XCTAssertEqual(metadata.http?.etag, "\"x\"")
        cache.memoryCache.removeAllObjects()
        XCTAssertEqual(try cache.getImage(forKey: "k")?.scale, 2, "the scale comes back from disk")
        try cache.removeImage(forKey: "k", type: .memory)
        XCTAssertTrue(try cache.containsImage(forKey: "k", type: .disk))
        try cache.removeImage(forKey: "k")
        XCTAssertFalse(try cache.containsImage(forKey: "k"))
    }

    func testUndecodableDiskEntryIsAMissAndIsRemoved() throws {
        try cache.diskCache!.setObject(Data("garbage".utf8), forKey: "bad")
        XCTAssertNil(try cache.getImage(forKey: "bad"))
        XCTAssertFalse(try cache.containsImage(forKey: "bad", type: .disk))
    }

    func testAsyncGet() async throws {
        try cache.setImage(try image(opaque: true), forKey: "a")
        cache.memoryCache.removeAllObjects()
        let loaded = try await cache.image(forKey: "a")
        XCTAssertEqual(loaded?.width, 8)
        let missing = try await cache.image(forKey: "nothing")
        XCTAssertNil(missing)
    }
}
