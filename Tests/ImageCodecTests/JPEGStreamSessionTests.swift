import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// The incremental JPEG building block: chunked data gives intermediate scans for progressive files and,
/// once final, exactly the one-shot pixels.
final class JPEGStreamSessionTests: XCTestCase {
    /// Feeds `data` in chunks, rendering after each; returns the final pixels, how many renders happened and
    /// whether the stream completed.
    private func feed(_ data: Data, chunkSizes: () -> Int) throws -> (PixelBuffer, Int, Bool) {
        let session = try JPEGStreamSession()
        var offset = 0
        var buffer: PixelBuffer?
        var renders = 0
        var complete = false
        var isFinal = false
        while !isFinal {
            let next = min(data.count, offset + max(1, chunkSizes()))
            isFinal = next == data.count
            try session.append(data.subdata(in: offset..<next), isFinal: isFinal)
            offset = next
            // Once final, keep rendering until libjpeg reaches the end (a few calls at most).
            for _ in 0..<(isFinal ? 64 : 1) where !complete {
                guard try session.prepare(limits: DecodeLimits(maxPixelsPerFrame: 16_000_000)), let size = session.outputSize else { break }
                if buffer == nil { buffer = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .rgba8) }
                let stride = size.width * 4
                let progress = try buffer!.withUnsafeMutableBytes { try session.render(into: $0.baseAddress!, bytesPerRow: stride) }
                if progress.didRender { renders += 1 }
                complete = progress.isComplete
            }
        }
        return (try XCTUnwrap(buffer), renders, complete)
    }

    func testProgressiveJPEGInChunksRendersScansAndEndsWithOneShotPixels() throws {
        let source = try JPEGPNGRoundTripTests.photoPattern(width: 120, height: 80)
        let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.9, isProgressive: true))
        let oneShot = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
        var generator = SplitMix64(seed: 42)
        for chunk in [1, 97, 4096] {
            let (pixels, renders, complete) = try feed(data, chunkSizes: {
                chunk == 97 ? 1 + Int(generator.next() % 300) : chunk
            })
            XCTAssertTrue(complete, "chunk \(chunk)")
            XCTAssertEqual(pixels, oneShot, "chunk \(chunk)")
            if chunk < 4096 { XCTAssertGreaterThan(renders, 2, "progressive scans rendered along the way (chunk \(chunk))") }
        }
    }

    func testBaselineJPEGInChunksEndsWithOneShotPixels() throws {
        let source = try JPEGPNGRoundTripTests.photoPattern(width: 64, height: 48)
        let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.8))
        let oneShot = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
        let (pixels, _, complete) = try feed(data, chunkSizes: { 333 })
        XCTAssertTrue(complete)
        XCTAssertEqual(pixels, oneShot)
    }

    func testTruncatedFinalDataGivesTheSameResultAsTheOneShotDecode() throws {
        let source = try JPEGPNGRoundTripTests.photoPattern(width: 64, height: 48)
        let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.8, isProgressive: true))
        var partials = 0
        // Some cut points fall inside entropy-coded data (a partial image), others inside a marker segment
        // (an error): either way the stream must agree with the one-shot decode.
        for percent in stride(from: 30, through: 95, by: 5) {
            let cut = Data(data.prefix(data.count * percent / 100))
            let oneShot: Image
            do { oneShot = try ImageDecoder.decode(cut, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)) } catch {
                XCTAssertThrowsError(try feed(cut, chunkSizes: { 500 }), "\(percent)%")
                continue
            }
            XCTAssertTrue(oneShot.isPartial, "\(percent)%")
            partials += 1
            let (pixels, _, complete) = try feed(cut, chunkSizes: { 500 })
            XCTAssertTrue(complete, "\(percent)%")
            XCTAssertEqual(pixels, oneShot.firstFrame.buffer, "\(percent)%")
        }
        XCTAssertGreaterThan(partials, 3)
    }

    /// Every accepted corpus JPEG (baseline, progressive, gray, CMYK, YCCK, truncated) fed in chunks ends with
    /// the one-shot pixels.
    func testCorpusJPEGsInChunksMatchOneShotDecodes() throws {
        let entries: [Corpus.Entry]
        do { entries = try Corpus.entries().filter { $0.format == "jpeg" && $0.isExpectedOK && ($0.bytes ?? 0) < 400_000 } }
        catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        XCTAssertGreaterThan(entries.count, 30)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let oneShot = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
            let (pixels, _, complete) = try feed(data, chunkSizes: { 7919 })
            XCTAssertTrue(complete, entry.path)
            XCTAssertEqual(pixels, oneShot.firstFrame.buffer, entry.path)
        }
    }

    /// Truncated and bit-flipped corpus JPEGs fed in random chunks: an image or an `ImageCodecError`, no crash.
    func testHostileStreamsNeverCrash() throws {
        let entries: [Corpus.Entry]
        do { entries = try Corpus.entries().filter { $0.format == "jpeg" && ($0.bytes ?? 0) < 200_000 } }
        catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
        var generator = SplitMix64(seed: 77)
        var runs = 0
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            var variants = (1...4).map { data.prefix(data.count * $0 / 5) }
            for _ in 0..<4 {
                var flipped = data
                for _ in 0..<3 where !flipped.isEmpty {
                    flipped[Int(generator.next() % UInt64(flipped.count))] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                }
                variants.append(flipped)
            }
            for variant in variants {
                runs += 1
                do {
                    _ = try feed(Data(variant), chunkSizes: { 1 + Int(generator.next() % 5000) })
                } catch {
                    XCTAssertTrue(error is ImageCodecError, "\(entry.path): \(error)")
                }
            }
        }
        XCTAssertEqual(runs, entries.count * 8)
    }

    func testGarbageGivesAnError() throws {
        let session = try JPEGStreamSession()
        try session.append(Data([0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x03, 0x99, 0x00, 0x00]), isFinal: true)
        XCTAssertThrowsError(try session.prepare())
    }
}
