import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Thumbnails that cannot stream rows top to bottom (Adam7 PNG, GIF) go through integer-factor boxes: exactly
/// the box average of the full decode, resized; close to full decode + resize; and allowed under limits that
/// forbid the full-size image.
final class BoxAccumulatorThumbnailTests: XCTestCase {
    private func interlacedPNG(width: Int, height: Int) throws -> Data {
        var encoder = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: true))
        encoder.addFrame(try DownsampleFixtures.photo(width: width, height: height, alpha: true))
        return try encoder.encode()
    }

    func testInterlacedPNGThumbnailIsTheBoxAverageOfTheFullDecode() throws {
        // 333×97 → 40×12: factors 8×8 leave partial boxes at the right and bottom edges.
        for (width, height, size) in [(333, 97, 40), (900, 500, 100), (64, 300, 31)] {
            let data = try interlacedPNG(width: width, height: height)
            for format in [PixelBuffer.PixelFormat.rgba8Premultiplied, .rgba8] {
                let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: format, maxPixelSize: size))
                let full = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: format)).firstFrame.buffer
                let expected = try BoxReference.thumbnail(of: full, width: image.width, height: image.height)
                XCTAssertEqual(image.pixelFormat, format)
                XCTAssertTrue(image.isProgressive)
                XCTAssertEqual(image.firstFrame.buffer.packedBytes, expected.packedBytes, "\(width)×\(height) \(format)")
                // Box averaging (then Lanczos3 over at most 2×) is softer than Lanczos3 over the whole shrink, and
                // this fixture is sharp-edged noise with alpha: about 24–32 dB PSNR against full decode + resize.
                let resized = try full.resized(width: image.width, height: image.height)
                let psnr = ReferenceDecoder.psnr(image.firstFrame.buffer.packedBytes, resized.packedBytes)
                print("interlaced PNG \(width)×\(height) → \(image.width)×\(image.height) \(format): PSNR \(psnr) dB")
                XCTAssertGreaterThan(psnr, 22, "close to full decode + Lanczos3")
            }
        }
    }

    func testInterlacedPNGThumbnailUnderLimitsThatForbidFullSize() throws {
        let data = try interlacedPNG(width: 1200, height: 800)
        let limits = DecodeLimits(maxPixelsPerFrame: 500_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits))) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, 960_000, 500_000) = error else { return XCTFail("\(error)") }
        }
        let image = try ImageDecoder.decode(data, options: DecodeOptions(limits: limits, maxPixelSize: 150))
        XCTAssertEqual(image.width, 150)
        XCTAssertEqual(image.height, 100)
        let full = try ImageDecoder.decode(data).firstFrame.buffer
        let expected = try BoxReference.thumbnail(of: full, width: 150, height: 100)
        XCTAssertEqual(image.firstFrame.buffer.packedBytes, expected.packedBytes)
        // The work cap still applies: a source over 4 × the per-frame limit is refused from the header.
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 200_000),
                                                                                 maxPixelSize: 150)))
    }

    func testGIFThumbnailUnderLimitsThatForbidFullSize() throws {
        var encoder = ImageEncoder(format: .gif)
        encoder.addFrame(try DownsampleFixtures.photo(width: 1000, height: 600))
        encoder.addFrame(try DownsampleFixtures.photo(width: 1000, height: 600, alpha: true))
        let data = try encoder.encode()
        let limits = DecodeLimits(maxPixelsPerFrame: 300_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits))) { error in
            guard case ImageCodecError.limitExceeded = error else { return XCTFail("\(error)") }
        }
        let image = try ImageDecoder.decode(data, options: DecodeOptions(limits: limits, maxPixelSize: 200))
        XCTAssertEqual(image.frameCount, 1, "a still of the first frame")
        XCTAssertEqual(image.width, 200)
        XCTAssertEqual(image.height, 120)
        let full = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true)).firstFrame.buffer
        let expected = try BoxReference.thumbnail(of: full, width: 200, height: 120)
        XCTAssertEqual(image.firstFrame.buffer.packedBytes, expected.packedBytes)
        let resized = try full.resized(width: 200, height: 120)
        let psnr = ReferenceDecoder.psnr(image.firstFrame.buffer.packedBytes, resized.packedBytes)
        print("GIF 1000×600 → 200×120: PSNR \(psnr) dB")
        XCTAssertGreaterThan(psnr, 22)
    }

    func testInterlacedGIFCorpusThumbnailsAreBoxAverages() throws {
        let entries = try Corpus.entries().filter { $0.format == "gif" && $0.isExpectedOK && $0.isProgressiveOrInterlaced == true }
        XCTAssertGreaterThan(entries.count, 2)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let full = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
            let size = max(1, max(full.width, full.height) / 3)
            let image = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: size))
            XCTAssertTrue(image.isProgressive, entry.path)
            XCTAssertEqual(image.hasAlpha, full.hasAlpha, entry.path)
            let expected = try BoxReference.thumbnail(of: full.firstFrame.buffer, width: image.width, height: image.height)
            XCTAssertEqual(image.firstFrame.buffer.packedBytes, expected.packedBytes, entry.path)
        }
    }
}
