import Foundation
@testable import ImageCodec
import TestSupport
import Synchronization
import XCTest

/// APNG decoding over the corpus: manifest facts, rejects, compositing on known-pattern files, laziness.
final class APNGConformanceTests: XCTestCase {
    func testEveryAcceptedAPNGDecodesWithManifestFacts() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "apng").filter(\.isExpectedOK)
        XCTAssertGreaterThan(entries.count, 30)
        for entry in entries { try JPEGPNGCorpusCheck.checkAccepted(entry) }
    }

    /// Documented choice: a broken animation chunk (CRC, sequence, missing data) is an error, not a still.
    func testEveryRejectedAPNGThrows() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "apng").filter { !$0.isExpectedOK }
        XCTAssertGreaterThan(entries.count, 10)
        for entry in entries { try JPEGPNGCorpusCheck.checkRejected(entry) }
    }

    /// Documented choice: an acTL browsers ignore (0 frames, > 2^31-1 frames, a second acTL) gives the still
    /// default image.
    func testIgnoredACTLGivesTheStillDefaultImage() throws {
        for name in ["pillow_apng_syntax_num_frames_zero_default.png", "pillow_apng_syntax_num_frames_invalid.png",
                     "pillow_apng_chunk_multi_actl.png"] {
            let entry = try XCTUnwrap(try JPEGPNGCorpusCheck.entries(format: "apng").first { $0.path.hasSuffix(name) })
            let image = try ImageDecoder.decode(try Data(contentsOf: entry.url))
            XCTAssertEqual(image.frameCount, 1, name)
            XCTAssertNil(image.storedLoopCount, name)
        }
    }

    /// The philip.html5.org APNG tests (as shipped by Pillow): the last frame's pixels at (0, 0) and (64, 32)
    /// as Pillow's own tests assert them (green = correct compositing; the few exceptions are intended).
    func testDisposeAndBlendTestFilesMatchTheirDocumentedPixels() throws {
        let green = RGBA(r: 0, g: 255, b: 0, a: 255)
        let clear = RGBA(r: 0, g: 0, b: 0, a: 0)
        let expectations: [(String, RGBA, RGBA)] = [
            ("dispose_op_none", green, green),
            ("dispose_op_none_region", green, green),
            ("dispose_op_background_region", RGBA(r: 0, g: 0, b: 255, a: 255), clear),
            ("dispose_op_background_before_region", clear, clear),
            ("dispose_op_background_final", green, green),
            ("dispose_op_previous", green, green),
            ("dispose_op_previous_region", green, green),
            ("dispose_op_previous_final", green, green),
            ("dispose_op_previous_first", clear, clear),
            ("blend_op_source_solid", green, green),
            ("blend_op_source_transparent", clear, clear),
        ]
        let entries = try JPEGPNGCorpusCheck.entries(format: "apng")
        for (name, corner, center) in expectations {
            guard let entry = entries.first(where: { $0.path.hasSuffix("pillow_apng_\(name).png") }) else {
                XCTFail("missing corpus file for \(name)"); continue
            }
            let image = try ImageDecoder.decode(try Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8))
            let last = try image.frame(at: image.frameCount - 1).buffer
            XCTAssertEqual(last.pixel(x: 0, y: 0), corner, "\(name) (0, 0)")
            XCTAssertEqual(last.pixel(x: 64, y: 32), center, "\(name) (64, 32)")
        }
    }

    func testLazyRandomAccessMatchesPreloadedFrames() throws {
        let entry = try XCTUnwrap(try JPEGPNGCorpusCheck.entries(format: "apng").first { $0.path.hasSuffix("danbooru_apng_normal.png") })
        let data = try Data(contentsOf: entry.url)
        let preloaded = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
        let lazy = try ImageDecoder.decode(data)
        XCTAssertEqual(lazy.frameCount, preloaded.frameCount)
        for index in [2, 0, 1, 2, 1, 0] {
            XCTAssertEqual(try lazy.frame(at: index).buffer, try preloaded.frame(at: index).buffer, "frame \(index)")
        }
        let still = try ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true))
        XCTAssertEqual(still.frameCount, 1)
        XCTAssertEqual(still.firstFrame.buffer, preloaded.firstFrame.buffer)
    }

    func testAnimationBombsAreRefusedByLimitsBeforeDecoding() throws {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        for _ in 0..<3 { encoder.addFrame(try PixelBuffer(width: 1000, height: 1000), duration: 0.1) }
        let data = try encoder.encode()
        let totalLimit = DecodeOptions(limits: DecodeLimits(maxTotalPixels: 2_000_000))
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: totalLimit)) { error in
            guard case ImageCodecError.limitExceeded(.totalPixels, 3_000_000, 2_000_000) = error else { return XCTFail("\(error)") }
        }
        let frameLimit = DecodeOptions(limits: DecodeLimits(maxFrameCount: 2))
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: frameLimit)) { error in
            guard case ImageCodecError.limitExceeded(.frameCount, 3, 2) = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try ImageDecoder.decode(data).frameCount, 3)
    }

    /// Rewrites the dispose and blend ops of the fcTL with sequence number `sequence` (CRC recomputed).
    private func patchFrameControl(_ data: Data, sequence: UInt32, dispose: UInt8, blend: UInt8) -> Data {
        var bytes = [UInt8](data)
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = offset + 8
            if type == "fcTL", length == 26,
               UInt32(bytes[body]) << 24 | UInt32(bytes[body + 1]) << 16 | UInt32(bytes[body + 2]) << 8 | UInt32(bytes[body + 3]) == sequence {
                bytes[body + 24] = dispose
                bytes[body + 25] = blend
                let crc = CRC32.checksum(bytes[(offset + 4)..<(body + length)])
                for i in 0..<4 { bytes[body + length + i] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(i))) }
            }
            offset = body + length + 4
        }
        return Data(bytes)
    }

    /// Random access around a full-canvas frame whose dispose op is "previous": it must not be used as a
    /// keyframe, or the canvas after it would be wrong.
    func testRandomAccessAroundDisposePreviousMatchesSequentialDecoding() throws {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        encoder.addFrame(try PixelBuffer(width: 4, height: 2, pixelFormat: .rgba8,
                                         bytes: [UInt8](repeating: 200, count: 32)), duration: 0.1)
        encoder.addFrame(try PixelBuffer(width: 4, height: 2, pixelFormat: .rgba8,
                                         bytes: (0..<32).map { $0 % 4 == 3 ? 255 : 10 }), duration: 0.1)
        encoder.addFrame(try PixelBuffer(width: 4, height: 2, pixelFormat: .rgba8,
                                         bytes: (0..<32).map { $0 % 4 == 3 ? 100 : 50 }), duration: 0.1)
        var data = try encoder.encode()
        // fcTL sequence numbers: frame 0 → 0, frame 1 → 1 (then its fdAT 2), frame 2 → 3.
        data = patchFrameControl(data, sequence: 1, dispose: 2, blend: 0)
        data = patchFrameControl(data, sequence: 3, dispose: 0, blend: 1)
        let preloaded = try ImageDecoder.decode(data, options: DecodeOptions(preloadAllFrames: true))
        // Frame 2 is drawn "over" frame 0's canvas (frame 1 was disposed to previous): not over frame 1.
        XCTAssertNotEqual(try preloaded.frame(at: 2).buffer, try preloaded.frame(at: 1).buffer)
        XCTAssertGreaterThan(try preloaded.frame(at: 2).buffer.pixel(x: 0, y: 0).r, 100)
        let lazy = try ImageDecoder.decode(data)
        for index in [2, 1, 2, 0, 2] {
            XCTAssertEqual(try lazy.frame(at: index).buffer, try preloaded.frame(at: index).buffer, "frame \(index)")
        }
    }

    func testConcurrentFrameAccessIsConsistent() throws {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        var expected: [PixelBuffer] = []
        for i in 0..<6 {
            var frame = try PixelBuffer(width: 16, height: 8, pixelFormat: .rgba8)
            frame.setPixel(x: i, y: 1, to: RGBA(r: 200, g: UInt8(i * 10), b: 0, a: 128))
            expected.append(frame)
            encoder.addFrame(frame, duration: 0.05)
        }
        let image = try ImageDecoder.decode(try encoder.encode(), options: DecodeOptions(pixelFormat: .rgba8))
        let failures = Atomic<Int>(0)
        let frames = expected
        DispatchQueue.concurrentPerform(iterations: 48) { n in
            let index = (n * 7) % 6
            do {
                if try image.frame(at: index).buffer != frames[index] { failures.add(1, ordering: .relaxed) }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
    }

    func testHostileAPNGVariantsNeverCrash() throws {
        let entries = try Corpus.entries().filter { $0.format == "apng" }
        var seed: UInt64 = 5000
        var total = 0
        for entry in entries {
            let result = JPEGPNGCorpusCheck.hostileVariants(of: try Data(contentsOf: entry.url), seed: seed)
            total += result.decoded + result.failed
            seed += 1
        }
        XCTAssertEqual(total, entries.count * 20)
    }
}
