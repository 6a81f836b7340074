import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

final class AVIFEncoderTests: XCTestCase {
    private func pattern(seed: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: 48, height: 32, pixelFormat: .rgba8)
        for y in 0..<32 { for x in 0..<48 {
            buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 5), g: UInt8(y * 7), b: UInt8((x + y + seed) % 2 * 200), a: 255))
        } }
        return buffer
    }

    func testRoundTripThroughTheRegistry() throws {
        guard AVIFCodec.isEncodingAvailable else {
            throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions)): AVIF encoding is not offered")
        }
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        let still = Image(buffer: try pattern(seed: 0).converted(to: .rgba8Premultiplied))
        let data = try still.encoded(as: .avif, isLossless: true)
        XCTAssertEqual(ImageFormat.sniff(data), .avif)
        let decoded = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
        let worst = try XCTUnwrap(ModernCodecChecks.maxDifference(decoded.firstFrame.buffer, reference: try pattern(seed: 0)))
        XCTAssertLessThanOrEqual(worst, 1, "lossless")

        var encoder = ImageEncoder(format: .avif, loopCount: 0)
        for seed in 0..<3 { encoder.addFrame(try pattern(seed: seed), duration: 0.2) }
        let animated = try ImageDecoder.decode(try encoder.encode())
        XCTAssertEqual(animated.frameCount, 3)
        XCTAssertEqual(animated.duration(at: 1), 0.2, accuracy: 0.001)
    }
}
