import Foundation
import ImageCodec
import TestSupport
import WebImage
import XCTest

/// The manager goes through the codec registry: a codec registered at run time decodes what the loopback
/// server sends, and its MIME type joins the default `Accept` header.
final class ManagerCodecRegistryTests: XCTestCase {
    private static func tinyFile() throws -> Data {
        var buffer = try PixelBuffer(width: 6, height: 4, pixelFormat: .rgba8)
        buffer.setPixel(x: 5, y: 3, to: RGBA(r: 9, g: 8, b: 7, a: 255))
        return try TinyCodec().encode([ImageFrame(buffer: buffer)], format: .unknown, loopCount: 1, options: EncodeOptions())
    }

    func testManagerDecodesARegisteredFormatAndAcceptsIt() throws {
        let fixture = try PipelineFixture()
        defer { fixture.tearDown() }
        let data = try Self.tinyFile()
        let url = fixture.serve("/a.tiny", data, contentType: TinyCodec.mimeType)

        let before = fixture.load(url)
        XCTAssertNil(before.image, "no codec for the tiny format yet")
        XCTAssertNotNil(before.error)
        XCTAssertFalse(fixture.server.requests(for: "/a.tiny").last?.header("Accept")?.contains(TinyCodec.mimeType) ?? true)

        // What the process's registry already accepts: other tests' `ImageService`s register the AVIF, JXL and HEIF
        // modules for the whole process (the server's design), and the order tests run in varies between builds.
        let acceptedBefore = try XCTUnwrap(ImageManager.defaultHeaders["Accept"])
        XCTAssertTrue(acceptedBefore.hasSuffix("image/webp,image/apng,image/*;q=0.8"), acceptedBefore)
        let token = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        defer { ImageCodecRegistry.shared.unregister(token) }
        XCTAssertEqual(ImageManager.defaultHeaders["Accept"], "\(TinyCodec.mimeType),\(acceptedBefore)")
        let after = fixture.load(fixture.serve("/b.tiny", data, contentType: TinyCodec.mimeType))
        let image = try XCTUnwrap(after.image, "\(String(describing: after.error))")
        XCTAssertEqual(image.width, 6)
        XCTAssertEqual(image.firstFrame.buffer.pixel(x: 5, y: 3), RGBA(r: 9, g: 8, b: 7, a: 255))
        XCTAssertEqual(after.source, .remote)
        let accept = try XCTUnwrap(fixture.server.requests(for: "/b.tiny").last?.header("Accept"))
        XCTAssertTrue(accept.hasPrefix(TinyCodec.mimeType + ","), accept)
    }

    func testHeadersSetByTheUserAreKept() throws {
        let manager = ImageManager(cache: nil)
        manager.headers = ["Accept": "image/png"]
        let token = ImageCodecRegistry.shared.register(decoder: TinyCodec())
        defer { ImageCodecRegistry.shared.unregister(token) }
        XCTAssertEqual(manager.headers, ["Accept": "image/png"])
        XCTAssertEqual(ImageManager(cache: nil).headers["Accept"]?.hasPrefix(TinyCodec.mimeType), true)
    }
}
