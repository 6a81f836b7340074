import Foundation
import ImageCodec
import TestSupport
import XCTest

final class GIFDecoderTests: XCTestCase {
    // MARK: Corpus conformance

    func testExpectedOKFilesDecodeWithManifestFacts() throws {
        try GIFWebPCorpus.assertExpectedOKFilesMatchManifest(format: "gif", imageFormat: .gif) { entry, image, info in
            XCTAssertEqual(image.isProgressive, entry.isProgressiveOrInterlaced, entry.path)
            if entry.hasAlpha == true { XCTAssertTrue(image.hasAlpha, entry.path) }
            XCTAssertEqual(info.durations.count, entry.frameCount, entry.path)
        }
    }

    func testRejectFilesThrowTypedErrors() throws {
        try GIFWebPCorpus.assertRejectFilesThrowTypedErrors(format: "gif", lazyDecodeThrows: true)
    }

    // MARK: Loop count

    func testLoopCountMapping() throws {
        let entries = try GIFWebPCorpus.entries(format: "gif").filter(\.isExpectedOK)
        let byName = Dictionary(entries.map { ($0.url.lastPathComponent, $0) }, uniquingKeysWith: { a, _ in a })
        // Stored 1 repeat → 2 plays; stored 0 → forever; absent → 1 play.
        let cases = [("danbooru_test-animated-86x52-loop-2.gif", 2, 1),
                     ("danbooru_test-animated-86x52.gif", 0, 0),
                     ("danbooru_test-animated-86x52-loop-1.gif", 1, nil)]
        for (name, plays, stored) in cases {
            guard let entry = byName[name] else { throw XCTSkip("\(name) not in corpus") }
            let image = try ImageDecoder.decode(Data(contentsOf: entry.url))
            XCTAssertEqual(image.loopCount, plays, name)
            XCTAssertEqual(image.storedLoopCount, stored, name)
        }
    }

    // MARK: Bombs

    func testHugeLogicalScreenIsRefusedByLimits() throws {
        let data = GIFBytes.make(width: 65535, height: 65535, frames: 1)
        XCTAssertLessThan(data.count, 100)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            guard case ImageCodecError.limitExceeded(limit: .pixelsPerFrame, _, _) = error else {
                return XCTFail("expected a pixelsPerFrame limit, got \(error)")
            }
        }
        XCTAssertEqual(try ImageDecoder.info(data).width, 65535)
    }

    func testThousandsOfFramesAreRefusedByLimits() throws {
        let data = GIFBytes.make(width: 1, height: 1, frames: 12_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            guard case ImageCodecError.limitExceeded(limit: .frameCount, _, let maximum) = error else {
                return XCTFail("expected a frameCount limit, got \(error)")
            }
            XCTAssertEqual(maximum, DecodeLimits.default.maxFrameCount)
        }
        let small = DecodeOptions(limits: DecodeLimits(maxTotalPixels: 50))
        XCTAssertThrowsError(try ImageDecoder.decode(GIFBytes.make(width: 1, height: 1, frames: 60), options: small)) { error in
            guard case ImageCodecError.limitExceeded(limit: .totalPixels, _, _) = error else {
                return XCTFail("expected a totalPixels limit, got \(error)")
            }
        }
        XCTAssertEqual(try ImageDecoder.decode(GIFBytes.make(width: 1, height: 1, frames: 40), options: small).frameCount, 40)
    }

    // MARK: Options

    func testFirstFrameOnlyAndPreloadAgreeWithLazyFrames() throws {
        let entries = try GIFWebPCorpus.entries(format: "gif").filter { $0.isExpectedOK && ($0.frameCount ?? 0) > 3 }
        for entry in entries.prefix(8) {
            let data = try Data(contentsOf: entry.url)
            let lazy = try ImageDecoder.decode(data)
            let eager = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
            let still = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
            XCTAssertEqual(still.frameCount, 1, entry.path)
            XCTAssertEqual(still.firstFrame.buffer, lazy.firstFrame.buffer, entry.path)
            // Random access: backwards, forwards, repeated.
            let order = [lazy.frameCount - 1, 1, lazy.frameCount / 2, 2, 2, 0, lazy.frameCount - 1]
            for index in order {
                XCTAssertEqual(try lazy.frame(at: index).buffer, try eager.frame(at: index).buffer, "\(entry.path) frame \(index)")
                XCTAssertEqual(lazy.duration(at: index), eager.duration(at: index))
            }
        }
    }

    func testBrokenLaterFrameThrowsOnDemandAndOnPreload() throws {
        var data = GIFBytes.make(width: 1, height: 1, frames: 3)
        // Frame 2's LZW data becomes "end of information" at once: giflib reports the image ended early.
        let frameData: [UInt8] = [2, 2, 0x44, 0x01, 0]
        let starts = (0..<data.count - frameData.count).filter { data[$0..<$0 + frameData.count].elementsEqual(frameData) }
        XCTAssertEqual(starts.count, 3)
        data.replaceSubrange(starts[2]..<starts[2] + frameData.count, with: [2, 2, 0x05, 0x00, 0])
        let lazy = try ImageDecoder.decode(data)
        XCTAssertEqual(lazy.frameCount, 3)
        XCTAssertNoThrow(try lazy.frame(at: 1))
        XCTAssertThrowsError(try lazy.frame(at: 2)) { XCTAssertTrue($0 is ImageCodecError, "\($0)") }
        XCTAssertNoThrow(try lazy.frame(at: 1), "the source recovers after a failed frame")
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true)))
    }

    func testRandomAccessAfterPlayThroughUsesSnapshotsCorrectly() throws {
        // 40 opaque frames disposed "none": no keyframe after frame 0, so random access relies on the
        // cached canvas and the periodic snapshots.
        let frames = try (0..<40).map { i in
            ImageFrame(buffer: try GIFWebPTestImages.indexed(width: 24, height: 16, colors: 5 + i % 7, shift: i,
                                                            transparentSquare: false), duration: 0.05)
        }
        let data = try GIFEncoder.encode(frames, loopCount: 0, options: EncodeOptions())
        let lazy = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
        for i in 0..<40 { _ = try lazy.frame(at: i) }
        var rng = SplitMix64(seed: 99)
        for _ in 0..<60 {
            let i = Int(rng.next() % 40)
            XCTAssertEqual(try lazy.frame(at: i).buffer.packedBytes, frames[i].buffer.packedBytes, "frame \(i)")
        }
    }

    func testDurationsFollowTheBrowserRule() throws {
        let data = GIFBytes.make(width: 1, height: 1, frames: 3, delays: [0, 1, 25])
        let image = try ImageDecoder.decode(data)
        XCTAssertEqual(image.duration(at: 0), 0.1)
        XCTAssertEqual(image.duration(at: 1), 0.1)
        XCTAssertEqual(image.duration(at: 2), 0.25, accuracy: 1e-9)
        XCTAssertEqual(try ImageDecoder.info(data).durations.count, 3)
    }
}

/// Builds minimal GIF files by hand: a 2-colour global table, 1×1-pixel LZW frames, optional delays.
enum GIFBytes {
    static func make(width: Int, height: Int, frames: Int, delays: [Int] = []) -> Data {
        var d = Data("GIF89a".utf8)
        d.append(contentsOf: [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0x80, 0, 0])
        d.append(contentsOf: [255, 0, 0, 0, 0, 255])
        for i in 0..<frames {
            let delay = i < delays.count ? delays[i] : 10
            d.append(contentsOf: [0x21, 0xF9, 4, 0, UInt8(delay & 0xFF), UInt8(delay >> 8), 0, 0])
            // A 1×1 frame at (0, 0) holding index 0: clear, 0, end of information at 3 bits.
            d.append(contentsOf: [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0])
        }
        d.append(0x3B)
        return d
    }
}
