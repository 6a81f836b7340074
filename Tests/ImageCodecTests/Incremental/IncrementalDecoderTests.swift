import Foundation
import ImageCodec
import TestSupport
import XCTest

/// `IncrementalDecoder`: header facts early, partial images along the way, and — fed byte by byte, in random
/// chunks or truncated — exactly the one-shot result once final.
final class IncrementalDecoderTests: XCTestCase {
    /// Feeds `data` in chunks from `sizes`, asking for an image after each; returns the decoder (final) and
    /// how many distinct partial images were made.
    private func feed(_ data: Data, options: DecodeOptions = DecodeOptions(),
                      sizes: () -> Int) throws -> (IncrementalDecoder, partials: Int) {
        var partials = 0
        let decoder = try IncrementalFeeding.feed(data, options: options, sizes: sizes) { _, _ in partials += 1 }
        return (decoder, partials)
    }

    /// Asserts the final image equals the one-shot decode (or both throw the same error).
    private func assertMatchesOneShot(_ decoder: IncrementalDecoder, _ data: Data, options: DecodeOptions = DecodeOptions(),
                                      _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        IncrementalFeeding.assertMatchesOneShot(decoder, data, options: options, label, file: file, line: line)
    }

    private func corpus(_ formats: Set<String>, maxBytes: Int) throws -> [Corpus.Entry] {
        try Corpus.entries().filter { formats.contains($0.format) && !$0.isHuge && ($0.bytes ?? .max) <= maxBytes }
    }

    func testRandomChunksOverCorpusEqualOneShot() throws {
        let entries = try corpus(["jpeg", "png", "apng", "gif", "webp"], maxBytes: 400_000)
        XCTAssertGreaterThan(entries.count, 20)
        var random = SplitMix64(seed: 7)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let (decoder, _) = try feed(data) { 1 + Int(random.next() % 4096) }
            assertMatchesOneShot(decoder, data, entry.path)
        }
    }

    func testByteByByteOnSmallFilesEqualsOneShot() throws {
        let entries = try corpus(["jpeg", "png", "gif", "webp"], maxBytes: 3000).filter(\.isExpectedOK)
        var picked: [Corpus.Entry] = []
        for format in ["jpeg", "png", "gif", "webp"] { picked += entries.filter { $0.format == format }.prefix(2) }
        XCTAssertGreaterThan(picked.count, 4)
        for entry in picked {
            let data = try Data(contentsOf: entry.url)
            let (decoder, _) = try feed(data) { 1 }
            assertMatchesOneShot(decoder, data, entry.path)
        }
    }

    func testTruncatedDataEqualsOneShotOfTheSameBytes() throws {
        let entries = try corpus(["jpeg", "png", "gif", "webp"], maxBytes: 200_000).filter(\.isExpectedOK)
        var random = SplitMix64(seed: 11)
        for entry in entries.prefix(60) {
            let full = try Data(contentsOf: entry.url)
            let data = full.prefix(full.count * 2 / 3)
            let (decoder, _) = try feed(Data(data)) { 1 + Int(random.next() % 2048) }
            assertMatchesOneShot(decoder, Data(data), "\(entry.path) truncated")
        }
    }

    func testProgressiveJPEGGivesSharperScansBeforeFinal() throws {
        let source = try DownsampleFixtures.photo(width: 320, height: 200)
        let data = try DownsampleFixtures.encode(source, as: .jpeg, progressive: true)
        let (decoder, partials) = try feed(data) { 512 }
        XCTAssertEqual(decoder.format, .jpeg)
        XCTAssertTrue(decoder.isProgressive)
        XCTAssertEqual(decoder.info?.width, 320)
        XCTAssertGreaterThan(partials, 1)
        assertMatchesOneShot(decoder, data, "progressive")
    }

    func testHeaderKnownBeforePixels() throws {
        var encoder = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: true))
        encoder.addFrame(try DownsampleFixtures.photo(width: 64, height: 40, alpha: true))
        let data = try encoder.encode()
        let decoder = IncrementalDecoder()
        try decoder.update(data.prefix(33), isFinal: false)
        XCTAssertEqual(decoder.format, .png)
        XCTAssertEqual(decoder.info?.width, 64)
        XCTAssertEqual(decoder.info?.height, 40)
        XCTAssertTrue(decoder.isProgressive)
        XCTAssertNil(try decoder.makeImage())
    }

    func testInterlacedPNGPartialIsACoarseFullImage() throws {
        var encoder = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: true))
        encoder.addFrame(try DownsampleFixtures.photo(width: 64, height: 64))
        let data = try encoder.encode()
        let decoder = IncrementalDecoder(options: DecodeOptions(pixelFormat: .rgba8))
        try decoder.update(data.prefix(data.count * 3 / 4), isFinal: false)
        let partial = try XCTUnwrap(try decoder.makeImage())
        XCTAssertTrue(partial.isPartial)
        // Adam7's early passes cover the whole image once replicated: the bottom-right pixel is opaque.
        XCTAssertEqual(partial.firstFrame.buffer.pixel(x: 63, y: 63).a, 255)
    }

    func testNonInterlacedPNGPartialHasTheRowsSoFar() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 64, height: 64), as: .png)
        let decoder = IncrementalDecoder(options: DecodeOptions(pixelFormat: .rgba8))
        try decoder.update(data.prefix(data.count / 2), isFinal: false)
        let partial = try XCTUnwrap(try decoder.makeImage())
        let full = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        XCTAssertEqual(partial.firstFrame.buffer.pixel(x: 10, y: 0), full.pixel(x: 10, y: 0))
        XCTAssertEqual(partial.firstFrame.buffer.pixel(x: 10, y: 63).a, 0, "rows not received stay transparent")
    }

    func testUpdateAfterFinalThrows() throws {
        let decoder = IncrementalDecoder()
        try decoder.update(Data([0xFF, 0xD8]), isFinal: true)
        XCTAssertThrowsError(try decoder.update(Data([0]), isFinal: false))
        XCTAssertThrowsError(try decoder.makeImage())
    }

    func testMaxPixelSizeAppliesToPartialAndFinalImages() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 400, height: 200), as: .jpeg,
                                                 progressive: true)
        let options = DecodeOptions(maxPixelSize: 100)
        let decoder = IncrementalDecoder(options: options)
        try decoder.update(data.prefix(data.count / 2), isFinal: false)
        if let partial = try decoder.makeImage() { XCTAssertEqual(partial.width, 100) }
        try decoder.update(data.suffix(from: data.count / 2), isFinal: true)
        XCTAssertEqual(try decoder.makeImage()?.width, 100)
        assertMatchesOneShot(decoder, data, options: options, "thumbnail")
    }
}

/// Still WebP through libwebp's incremental decoder.
final class IncrementalWebPTests: XCTestCase {
    func testStillWebPGivesRowsSoFarThenTheOneShotImage() throws {
        let source = try DownsampleFixtures.photo(width: 256, height: 256)
        var encoder = ImageEncoder(format: .webp, options: EncodeOptions(quality: 0.9, isLossless: true))
        encoder.addFrame(source)
        let data = try encoder.encode()
        let decoder = IncrementalDecoder()
        try decoder.update(data.prefix(data.count * 2 / 3), isFinal: false)
        XCTAssertEqual(decoder.format, .webp)
        XCTAssertEqual(decoder.info?.width, 256)
        let partial = try XCTUnwrap(try decoder.makeImage())
        XCTAssertTrue(partial.isPartial)
        XCTAssertEqual(partial.firstFrame.buffer.pixel(x: 5, y: 0).a, 255, "first rows decoded")
        XCTAssertEqual(partial.firstFrame.buffer.pixel(x: 5, y: 255).a, 0, "last rows not yet")
        try decoder.update(data.suffix(from: data.count * 2 / 3), isFinal: true)
        XCTAssertEqual(try decoder.makeImage()?.firstFrame.buffer, try ImageDecoder.decode(data).firstFrame.buffer)
    }
}
