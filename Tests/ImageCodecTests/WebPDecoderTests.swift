import Foundation
import ImageCodec
import TestSupport
import XCTest

final class WebPDecoderTests: XCTestCase {
    // MARK: Corpus conformance

    func testExpectedOKFilesDecodeWithManifestFacts() throws {
        try GIFWebPCorpus.assertExpectedOKFilesMatchManifest(format: "webp", imageFormat: .webp) { entry, image, _ in
            XCTAssertEqual(image.hasAlpha, entry.hasAlpha, entry.path)
            if let stored = entry.loopCount, image.isAnimated { XCTAssertEqual(image.loopCount, stored, entry.path) }
        }
    }

    func testRejectFilesThrowTypedErrors() throws {
        try GIFWebPCorpus.assertRejectFilesThrowTypedErrors(format: "webp", lazyDecodeThrows: false)
    }

    // MARK: Animation

    func testLazyRandomAccessMatchesPreloadedFrames() throws {
        let entries = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && ($0.frameCount ?? 0) > 2 }
        XCTAssertFalse(entries.isEmpty)
        for entry in entries.prefix(4) {
            let data = try Data(contentsOf: entry.url)
            let lazy = try ImageDecoder.decode(data)
            let eager = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
            let n = lazy.frameCount
            for index in [n - 1, 1, n / 2, 2, 2, 0, n - 1] {
                XCTAssertEqual(try lazy.frame(at: index).buffer, try eager.frame(at: index).buffer, "\(entry.path) frame \(index)")
            }
            // Straight alpha asked of a lazily decoded frame.
            let straight = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
            XCTAssertEqual(try straight.frame(at: n - 1).buffer.pixelFormat, .rgba8)
            XCTAssertEqual(try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true)).frameCount, 1)
        }
    }

    func testDurationsComeFromFramesWithTheBrowserRule() throws {
        let entries = try GIFWebPCorpus.entries(format: "webp").filter { $0.isExpectedOK && ($0.frameCount ?? 0) > 1 }
        for entry in entries {
            let image = try ImageDecoder.decode(Data(contentsOf: entry.url))
            for i in 0..<image.frameCount { XCTAssertGreaterThanOrEqual(image.duration(at: i), 0.011, entry.path) }
        }
    }

    // MARK: Limits

    func testLimitsAreCheckedFromTheHeader() throws {
        let entries = try GIFWebPCorpus.entries(format: "webp").filter(\.isExpectedOK)
        guard let still = entries.first(where: { $0.frameCount == 1 && ($0.width ?? 0) > 100 }),
              let animated = entries.first(where: { ($0.frameCount ?? 0) > 5 }) else { throw XCTSkip("no suitable files") }
        let tiny = DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 100))
        XCTAssertThrowsError(try ImageDecoder.decode(Data(contentsOf: still.url), options: tiny)) {
            guard case ImageCodecError.limitExceeded(limit: .pixelsPerFrame, _, _) = $0 else { return XCTFail("\($0)") }
        }
        let fewFrames = DecodeOptions(limits: DecodeLimits(maxFrameCount: 2))
        XCTAssertThrowsError(try ImageDecoder.decode(Data(contentsOf: animated.url), options: fewFrames)) {
            guard case ImageCodecError.limitExceeded(limit: .frameCount, _, _) = $0 else { return XCTFail("\($0)") }
        }
    }

    func testHugeCanvasInTinyFileIsRefused() throws {
        // A VP8X header announcing a 16384×16384 canvas followed by nothing useful.
        var d = Data("RIFF".utf8)
        d.append(contentsOf: [22, 0, 0, 0])
        d.append(contentsOf: Array("WEBPVP8X".utf8))
        d.append(contentsOf: [10, 0, 0, 0, 0x10, 0, 0, 0])
        let w = 16383, h = 16383
        d.append(contentsOf: [UInt8(w & 0xFF), UInt8((w >> 8) & 0xFF), 0, UInt8(h & 0xFF), UInt8((h >> 8) & 0xFF), 0])
        XCTAssertThrowsError(try ImageDecoder.decode(d, options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 1 << 20)))) {
            XCTAssertTrue($0 is ImageCodecError, "\($0)")
        }
    }
}

final class WebPThumbnailTests: XCTestCase {
    func testMaxPixelSizeScalesStillImagesInsideLibwebp() throws {
        let input = try GIFWebPTestImages.photoLike(width: 300, height: 200)
        let data = try WebPEncoder.encode(input, options: EncodeOptions(quality: 0.9))
        let thumbnail = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 75))
        XCTAssertEqual(thumbnail.width, 75)
        XCTAssertEqual(thumbnail.height, 50)
        // The limit applies to the scaled size: a thumbnail fits where the full image would not.
        let limits = DecodeLimits(maxPixelsPerFrame: 10_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits)))
        XCTAssertEqual(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits, maxPixelSize: 100)).width, 100)
        XCTAssertEqual(try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 1000)).width, 300)
    }
}
