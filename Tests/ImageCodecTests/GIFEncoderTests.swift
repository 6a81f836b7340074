import Foundation
import ImageCodec
import TestSupport
import XCTest

final class GIFEncoderTests: XCTestCase {
    private func straight(_ data: Data) throws -> Image {
        try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, preloadAllFrames: true))
    }

    func testFewColoursRoundTripExactlyWithTransparency() throws {
        let input = try GIFWebPTestImages.indexed(width: 61, height: 47, colors: 200, transparentSquare: true)
        let data = try ImageEncoder.encodeGIF([ImageFrame(buffer: input)], loopCount: 1)
        let image = try straight(data)
        XCTAssertEqual(image.format, .gif)
        XCTAssertEqual(image.frameCount, 1)
        XCTAssertTrue(image.hasAlpha)
        XCTAssertEqual(image.firstFrame.buffer.packedBytes, input.packedBytes)
    }

    func testExactly256OpaqueColoursRoundTripExactly() throws {
        let input = try GIFWebPTestImages.indexed(width: 64, height: 64, colors: 256, transparentSquare: false)
        let image = try straight(GIFEncoder.encode([ImageFrame(buffer: input)], loopCount: 1, options: EncodeOptions()))
        XCTAssertEqual(image.firstFrame.buffer.packedBytes, input.packedBytes)
        XCTAssertFalse(image.hasAlpha)
    }

    func testAnimationKeepsFramesDurationsAndLoopCount() throws {
        let frames = try (0..<4).map { i in
            ImageFrame(buffer: try GIFWebPTestImages.indexed(width: 32, height: 24, colors: 16, shift: i * 3,
                                                            transparentSquare: i % 2 == 1),
                       duration: [0.1, 0.25, 0.5, 1.0][i])
        }
        for (loopCount, stored) in [(0, Optional(0)), (3, Optional(2)), (1, nil)] as [(Int, Int?)] {
            let image = try straight(GIFEncoder.encode(frames, loopCount: loopCount, options: EncodeOptions()))
            XCTAssertEqual(image.frameCount, 4)
            XCTAssertEqual(image.loopCount, loopCount)
            XCTAssertEqual(image.storedLoopCount, stored)
            for i in 0..<4 {
                XCTAssertEqual(image.duration(at: i), frames[i].duration, accuracy: 1e-9)
                // Transparent areas must not show the previous frame (frames are disposed to background).
                XCTAssertEqual(try image.frame(at: i).buffer.packedBytes, frames[i].buffer.packedBytes, "frame \(i)")
            }
        }
    }

    func testPhotoLikeImageIsClose() throws {
        let input = try GIFWebPTestImages.photoLike(width: 160, height: 120)
        for dithering in [false, true] {
            let data = try GIFEncoder.encode([ImageFrame(buffer: input)], loopCount: 1, options: EncodeOptions(), dithering: dithering)
            let output = try straight(data).firstFrame.buffer
            let psnr = ReferenceDecoder.psnr(GIFWebPTestImages.rgb(output), GIFWebPTestImages.rgb(input))
            print("GIF photo-like round trip PSNR over RGB (dithering \(dithering)): \(psnr) dB")
            XCTAssertGreaterThan(psnr, dithering ? 32 : 34)
        }
    }

    func testPremultipliedInputAndAlphaThreshold() throws {
        let input = try GIFWebPTestImages.photoLike(width: 40, height: 30, alpha: true).converted(to: .rgba8Premultiplied)
        let output = try straight(GIFEncoder.encode([ImageFrame(buffer: input)], loopCount: 1, options: EncodeOptions()))
        let source = input.converted(to: .rgba8).packedBytes, result = output.firstFrame.buffer.packedBytes
        for p in 0..<(source.count / 4) {
            XCTAssertEqual(result[p * 4 + 3], source[p * 4 + 3] >= 128 ? 255 : 0, "pixel \(p)")
        }
    }

    func testFramesOfDifferentSizesAreRefused() throws {
        let a = try PixelBuffer(width: 4, height: 4), b = try PixelBuffer(width: 5, height: 4)
        XCTAssertThrowsError(try GIFEncoder.encode([ImageFrame(buffer: a), ImageFrame(buffer: b)], loopCount: 0, options: EncodeOptions()))
        XCTAssertThrowsError(try GIFEncoder.encode([], loopCount: 0, options: EncodeOptions()))
    }

    func testCorpusAnimationReEncodesWithSameFramesAndLoop() throws {
        let entries = try GIFWebPCorpus.entries(format: "gif").filter { $0.isExpectedOK && ($0.frameCount ?? 0) > 3 }
        guard let entry = entries.first(where: { $0.path.contains("mixed-disposal") }) ?? entries.first else { throw XCTSkip("no animation") }
        let original = try ImageDecoder.decode(Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8))
        let again = try straight(original.encoded(as: .gif))
        XCTAssertEqual(again.frameCount, original.frameCount)
        XCTAssertEqual(again.loopCount, original.loopCount)
        for i in 0..<original.frameCount {
            XCTAssertEqual(again.duration(at: i), original.duration(at: i), accuracy: 1e-9)
            XCTAssertEqual(try again.frame(at: i).buffer.packedBytes, try original.frame(at: i).buffer.packedBytes, "frame \(i)")
        }
    }
}

extension ImageEncoder {
    /// Encodes frames as GIF through the public `ImageEncoder` entry point.
    static func encodeGIF(_ frames: [ImageFrame], loopCount: Int) throws -> Data {
        var encoder = ImageEncoder(format: .gif, loopCount: loopCount)
        for frame in frames { encoder.addFrame(frame.buffer, duration: frame.duration) }
        return try encoder.encode()
    }
}
