import ImageCodec
import XCTest

final class PixelBufferTests: XCTestCase {
    func testAllocationIsZeroedAndSizeChecked() throws {
        let buffer = try PixelBuffer(width: 3, height: 2)
        XCTAssertEqual(buffer.bytesPerRow, 12)
        XCTAssertEqual(buffer.packedBytes, [UInt8](repeating: 0, count: 24))
        XCTAssertThrowsError(try PixelBuffer(width: 0, height: 1))
        XCTAssertThrowsError(try PixelBuffer(width: Int.max / 2, height: 3))
        XCTAssertThrowsError(try PixelBuffer(width: 4, height: 4, bytesPerRow: 8))
    }

    func testCopyOnWriteKeepsCopiesIndependent() throws {
        var a = try PixelBuffer(width: 2, height: 2)
        let b = a
        a.setPixel(x: 1, y: 1, to: RGBA(r: 1, g: 2, b: 3, a: 4))
        XCTAssertEqual(a.pixel(x: 1, y: 1), RGBA(r: 1, g: 2, b: 3, a: 4))
        XCTAssertEqual(b.pixel(x: 1, y: 1), RGBA(r: 0, g: 0, b: 0, a: 0))
        XCTAssertNotEqual(a, b)
    }

    func testPremultiplyRoundTrip() throws {
        var straight = try PixelBuffer(width: 2, height: 1, pixelFormat: .rgba8, bytes: [200, 100, 50, 128, 10, 20, 30, 255])
        let premultiplied = straight.converted(to: .rgba8Premultiplied)
        XCTAssertEqual(premultiplied.pixel(x: 0, y: 0), RGBA(r: 100, g: 50, b: 25, a: 128))
        XCTAssertEqual(premultiplied.pixel(x: 1, y: 0), RGBA(r: 10, g: 20, b: 30, a: 255))
        let back = premultiplied.converted(to: .rgba8)
        XCTAssertEqual(back.pixel(x: 0, y: 0), RGBA(r: 199, g: 100, b: 50, a: 128))
        straight.convert(to: .rgba8)
        XCTAssertEqual(straight.pixelFormat, .rgba8)
        XCTAssertFalse(premultiplied.isOpaque)
    }

    func testDecodeLimitsRejectBeforeAllocating() {
        let limits = DecodeLimits(maxPixelsPerFrame: 100, maxTotalPixels: 1_000, maxFrameCount: 5)
        XCTAssertNoThrow(try limits.check(width: 10, height: 10))
        XCTAssertThrowsError(try limits.check(width: 11, height: 10)) { error in
            XCTAssertEqual(error as? ImageCodecError, .limitExceeded(limit: .pixelsPerFrame, actual: 110, maximum: 100))
        }
        XCTAssertThrowsError(try limits.check(width: 10, height: 10, frameCount: 6))
        XCTAssertNoThrow(try limits.check(width: 10, height: 10, frameCount: 5))
        let tight = DecodeLimits(maxPixelsPerFrame: 100, maxTotalPixels: 400, maxFrameCount: 5)
        XCTAssertThrowsError(try tight.check(width: 10, height: 10, frameCount: 5)) { error in
            XCTAssertEqual(error as? ImageCodecError, .limitExceeded(limit: .totalPixels, actual: 500, maximum: 400))
        }
        XCTAssertThrowsError(try limits.check(width: Int.max, height: 2))
    }
}
