import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// PNG through libpng's progressive reader: fed byte by byte, in random chunks or truncated, it never
/// crashes and once final gives exactly the one-shot result; partial images are the rows (or Adam7 passes)
/// so far.
final class IncrementalPNGStreamTests: XCTestCase {
    private func pngEntries(maxBytes: Int) throws -> [Corpus.Entry] {
        try Corpus.entries().filter { ($0.format == "png" || $0.path.hasSuffix(".png")) && !$0.isHuge
            && ($0.bytes ?? .max) <= maxBytes }
    }

    func testRandomChunksOverPNGCorpusEqualOneShotAndUseTheStream() throws {
        let entries = try pngEntries(maxBytes: 150_000)
        XCTAssertGreaterThan(entries.count, 40)
        XCTAssertTrue(entries.contains { $0.isProgressiveOrInterlaced == true && $0.isExpectedOK }, "interlaced files")
        var fromStream = 0, plainOK = 0
        for seed: UInt64 in [1, 2] {
            var random = SplitMix64(seed: seed)
            for entry in entries {
                let data = try Data(contentsOf: entry.url)
                let decoder = try IncrementalFeeding.feed(data) { 1 + random.next(upTo: 4096) }
                let ok = IncrementalFeeding.assertMatchesOneShot(decoder, data, "\(entry.path) seed \(seed)")
                if ok, ImageFormat.sniff(data) == .png {
                    plainOK += 1
                    if decoder.isFinalFromStream { fromStream += 1 }
                }
            }
        }
        print("PNG stream finals: \(fromStream) of \(plainOK) decodable plain PNGs")
        // Files with libpng warnings fall back to the one-shot decode; the rest must come from the stream.
        XCTAssertGreaterThan(fromStream, plainOK * 3 / 4, "\(fromStream) of \(plainOK) final images from the stream")
    }

    func testByteByByteOnInterlaced16BitAndPaletteFilesEqualsOneShot() throws {
        let entries = try pngEntries(maxBytes: 6000).filter { $0.isExpectedOK && $0.format == "png" }
        let interlaced = entries.filter { $0.isProgressiveOrInterlaced == true }.prefix(3)
        let sixteen = entries.filter { $0.path.contains("16") }.prefix(2)
        let palette = entries.filter { $0.path.contains("palette") || $0.path.contains("3p0") }.prefix(3)
        let picked = Array(interlaced) + Array(sixteen) + Array(palette)
        XCTAssertGreaterThanOrEqual(picked.count, 5)
        XCTAssertTrue(picked.contains { $0.isProgressiveOrInterlaced == true }, "an interlaced file")
        print("byte by byte: \(picked.map(\.path))")
        for entry in picked {
            let data = try Data(contentsOf: entry.url)
            let decoder = try IncrementalFeeding.feed(data) { 1 }
            IncrementalFeeding.assertMatchesOneShot(decoder, data, "\(entry.path) byte by byte")
            XCTAssertTrue(decoder.isFinalFromStream, "\(entry.path): the stream's pixels")
        }
    }

    func testPremultipliedAndStraightFinalsEqualOneShot() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 97, height: 61, alpha: true), as: .png)
        for format in [PixelBuffer.PixelFormat.rgba8, .rgba8Premultiplied] {
            var random = SplitMix64(seed: 5)
            let options = DecodeOptions(pixelFormat: format)
            let decoder = try IncrementalFeeding.feed(data, options: options) { 1 + random.next(upTo: 700) }
            IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, "\(format)")
            XCTAssertTrue(decoder.isFinalFromStream)
        }
    }

    func testTruncatedPNGsEqualOneShotOfTheSameBytes() throws {
        let entries = try pngEntries(maxBytes: 100_000).filter(\.isExpectedOK)
        var random = SplitMix64(seed: 23)
        for entry in entries {
            let full = try Data(contentsOf: entry.url)
            for _ in 0..<2 {
                let data = full.prefix(1 + random.next(upTo: full.count - 1))
                let decoder = try IncrementalFeeding.feed(Data(data)) { 1 + random.next(upTo: 8192) }
                IncrementalFeeding.assertMatchesOneShot(decoder, Data(data), "\(entry.path) cut at \(data.count)")
                XCTAssertFalse(decoder.isFinalFromStream, "truncated data never ends the stream")
            }
        }
    }

    func testNonInterlacedRowsSoFarGrowAndEqualTheFinalRows() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 120, height: 90), as: .png)
        let options = DecodeOptions(pixelFormat: .rgba8)
        let full = try ImageDecoder.decode(data, options: options).firstFrame.buffer
        var rowCounts: [Int] = []
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: { 512 }) { image, decoder in
            let rows = IncrementalFeeding.opaqueRowPrefix(image.firstFrame.buffer)
            XCTAssertEqual(rows, decoder.pngProgress?.rowsInPass, "rows so far are the rows libpng delivered")
            XCTAssertTrue(IncrementalFeeding.rowsEqual(image.firstFrame.buffer, full, count: rows))
            if rows < 90 { XCTAssertEqual(image.firstFrame.buffer.pixel(x: 5, y: 89).a, 0, "rest transparent") }
            XCTAssertTrue(image.hasAlpha || rows == 90)
            rowCounts.append(rows)
        }
        XCTAssertGreaterThan(rowCounts.count, 3)
        XCTAssertEqual(rowCounts, rowCounts.sorted(), "rows so far never shrink")
        IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, "rows so far")
        XCTAssertTrue(decoder.isFinalFromStream)
    }

    func testInterlacedGivesACoarseFullImageAfterPassOne() throws {
        let width = 80, height = 56
        var encoder = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: true))
        encoder.addFrame(try DownsampleFixtures.photo(width: width, height: height))
        let data = try encoder.encode()
        let options = DecodeOptions(pixelFormat: .rgba8)
        let full = try ImageDecoder.decode(data, options: options).firstFrame.buffer
        var checkedPassOne = false
        var passes: [Int] = []
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: { 97 }) { image, decoder in
            let progress = try XCTUnwrap(decoder.pngProgress)
            passes.append(progress.passesCompleted)
            guard progress.passesCompleted >= 1, !checkedPassOne else { return }
            checkedPassOne = true
            let partial = image.firstFrame.buffer
            XCTAssertEqual(partial.width, width)
            XCTAssertEqual(partial.height, height)
            XCTAssertTrue(partial.isOpaque, "pass 1 replicated over 8×8 blocks covers the whole image")
            for y in stride(from: 0, to: height, by: 8) {
                for x in stride(from: 0, to: width, by: 8) {
                    XCTAssertEqual(partial.pixel(x: x, y: y), full.pixel(x: x, y: y), "pass-1 pixel (\(x), \(y))")
                    // Replicated over its block (later passes only touch rows/columns they own).
                    XCTAssertEqual(partial.pixel(x: min(x + 3, width - 1), y: min(y + 3, height - 1)),
                                   full.pixel(x: x, y: y), "block of (\(x), \(y))")
                }
            }
        }
        XCTAssertTrue(checkedPassOne, "a partial image after pass 1 (passes seen: \(passes))")
        XCTAssertEqual(passes, passes.sorted(), "passes never go back")
        IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, "interlaced")
        XCTAssertTrue(decoder.isFinalFromStream)
    }

    func testLimitsAreCheckedBeforeTheStreamAllocates() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 300, height: 200), as: .png)
        let options = DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 10_000))
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: { 1000 }) { _, _ in
            XCTFail("no partial image past the limits")
        }
        XCTAssertNil(decoder.pngProgress, "the stream stopped at the header")
        XCTAssertThrowsError(try decoder.makeImage()) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, 60_000, 10_000) = error else {
                return XCTFail("\(error)")
            }
        }
    }

    func testThumbnailAndAPNGFinalsComeFromTheOneShotDecode() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 300, height: 200), as: .png)
        let options = DecodeOptions(maxPixelSize: 64)
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: { 4096 }) { image, _ in
            XCTAssertEqual(image.width, 64)
        }
        IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, "thumbnail")
        XCTAssertFalse(decoder.isFinalFromStream)

        let apng = try Corpus.entries().filter { $0.format == "apng" && $0.isExpectedOK && ($0.frameCount ?? 0) > 1 }
        let entry = try XCTUnwrap(apng.first)
        let animated = try Data(contentsOf: entry.url)
        let apngDecoder = try IncrementalFeeding.feed(animated, sizes: { 100 })
        IncrementalFeeding.assertMatchesOneShot(apngDecoder, animated, entry.path)
        XCTAssertFalse(apngDecoder.isFinalFromStream)
        XCTAssertEqual(try apngDecoder.makeImage()?.format, .apng)
    }
}

/// Hostile PNGs through the stream: a decompression bomb never allocates, chunks declaring huge lengths do
/// not stall it, and the final verdict is the one-shot decode's.
final class IncrementalPNGStreamHostileTests: XCTestCase {
    func testDecompressionBombIsRefusedBeforeAllocating() throws {
        let entry = try Corpus.entries().first { $0.path == "png/sharp_65536-uint32-limit.png" }
        guard let entry else { throw XCTSkip("corpus lacks png/sharp_65536-uint32-limit.png") }
        let data = try Data(contentsOf: entry.url)
        let decoder = try IncrementalFeeding.feed(data, sizes: { 64 * 1024 }) { _, _ in
            XCTFail("no partial image of a 65536×65536 PNG under the default limits")
        }
        XCTAssertNil(decoder.pngProgress, "the stream stopped at IHDR")
        IncrementalFeeding.assertMatchesOneShot(decoder, data, entry.path)
    }

    func testHugeDeclaredChunksAndBadFilesMatchOneShot() throws {
        let entries = try Corpus.entries().filter { $0.path.hasPrefix("bad/") && $0.format == "png" }
        XCTAssertGreaterThan(entries.count, 10)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            for size in [1, 7, 4096] {
                let decoder = try IncrementalFeeding.feed(data, sizes: { size })
                IncrementalFeeding.assertMatchesOneShot(decoder, data, "\(entry.path) in \(size)-byte chunks")
            }
        }
    }
}
