import Foundation
import ImageCodec
import TestSupport
import XCTest

final class WebPEncoderTests: XCTestCase {
    private func straight(_ data: Data) throws -> Image {
        try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, preloadAllFrames: true))
    }

    func testLosslessRoundTripIsExact() throws {
        let input = try GIFWebPTestImages.photoLike(width: 97, height: 61, alpha: true)
        let data = try WebPEncoder.encode(input, options: EncodeOptions(isLossless: true))
        let image = try straight(data)
        XCTAssertEqual(image.format, .webp)
        XCTAssertTrue(image.hasAlpha)
        XCTAssertEqual(image.firstFrame.buffer.packedBytes, input.packedBytes)
        // Premultiplied in, premultiplied out: the same pixels again.
        let premultiplied = input.converted(to: .rgba8Premultiplied)
        let display = try ImageDecoder.decode(try WebPEncoder.encode(premultiplied, options: EncodeOptions(isLossless: true)))
        XCTAssertLessThanOrEqual(ReferenceDecoder.maxDifference(display.firstFrame.buffer.packedBytes, premultiplied.packedBytes), 1)
    }

    func testLossyRoundTripIsCloseAtQuality09() throws {
        let input = try GIFWebPTestImages.photoLike(width: 160, height: 120)
        let data = try Image(buffer: input).encoded(as: .webp, quality: 0.9)
        let output = try straight(data).firstFrame.buffer
        let psnr = ReferenceDecoder.psnr(GIFWebPTestImages.rgb(output), GIFWebPTestImages.rgb(input))
        print("WebP lossy q0.9 PSNR over RGB: \(psnr) dB, \(data.count) bytes")
        XCTAssertGreaterThanOrEqual(psnr, 30)
        let small = try WebPEncoder.encode(input, options: EncodeOptions(quality: 0.1))
        XCTAssertLessThan(small.count, data.count)
    }

    func testAnimationRoundTripKeepsFramesDurationsAndLoopCount() throws {
        let frames = try (0..<5).map { i in
            ImageFrame(buffer: try GIFWebPTestImages.indexed(width: 40, height: 30, colors: 12, shift: i * 5,
                                                            transparentSquare: i % 2 == 0),
                       duration: [0.1, 0.2, 0.05, 1.5, 0.3][i])
        }
        for loopCount in [0, 1, 4] {
            var encoder = ImageEncoder(format: .webp, loopCount: loopCount, options: EncodeOptions(isLossless: true))
            for frame in frames { encoder.addFrame(frame.buffer, duration: frame.duration) }
            let image = try straight(try encoder.encode())
            XCTAssertEqual(image.frameCount, 5)
            XCTAssertEqual(image.loopCount, loopCount)
            XCTAssertEqual(image.storedLoopCount, loopCount)
            for i in 0..<5 {
                XCTAssertEqual(image.duration(at: i), frames[i].duration, accuracy: 1e-9)
                XCTAssertEqual(try image.frame(at: i).buffer.packedBytes, frames[i].buffer.packedBytes, "frame \(i)")
            }
        }
    }

    func testCorpusAnimationReEncodes() throws {
        let entries = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && ($0.frameCount ?? 0) > 3 }
        guard let entry = entries.first else { throw XCTSkip("no animated WebP") }
        let original = try ImageDecoder.decode(Data(contentsOf: entry.url))
        let again = try ImageDecoder.decode(try original.encoded(as: .webp, quality: 0.9))
        XCTAssertEqual(again.loopCount, original.loopCount)
        XCTAssertEqual(again.width, original.width)
        XCTAssertGreaterThan(again.frameCount, 1)
        XCTAssertLessThanOrEqual(again.frameCount, original.frameCount)
        XCTAssertEqual(again.totalDuration, original.totalDuration, accuracy: 0.01)
    }

    func testFramesOfDifferentSizesAreRefused() throws {
        let a = try PixelBuffer(width: 4, height: 4), b = try PixelBuffer(width: 5, height: 4)
        XCTAssertThrowsError(try WebPEncoder.encodeAnimation([ImageFrame(buffer: a), ImageFrame(buffer: b)], loopCount: 0,
                                                             options: EncodeOptions()))
    }
}
