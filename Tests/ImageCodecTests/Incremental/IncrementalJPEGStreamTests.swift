import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// JPEG through the suspending libjpeg stream: baseline rows so far (each row decoded once), progressive
/// scans; fed byte by byte, in random chunks or truncated, exactly the one-shot result once final.
final class IncrementalJPEGStreamTests: XCTestCase {
    private func jpegEntries(maxBytes: Int) throws -> [Corpus.Entry] {
        try Corpus.entries().filter { $0.format == "jpeg" && !$0.isHuge && ($0.bytes ?? .max) <= maxBytes }
    }

    func testBaselineRowsSoFarGrowAndEqualTheFinalRows() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 160, height: 120), as: .jpeg)
        let full = try ImageDecoder.decode(data).firstFrame.buffer
        var rowCounts: [Int] = []
        let decoder = try IncrementalFeeding.feed(data, sizes: { 400 }) { image, decoder in
            let buffer = image.firstFrame.buffer
            let rows = IncrementalFeeding.opaqueRowPrefix(buffer)
            XCTAssertEqual(rows, decoder.jpegRowsDecoded, "the opaque rows are the rows libjpeg decoded")
            XCTAssertTrue(IncrementalFeeding.rowsEqual(buffer, full, count: rows), "decoded rows are final rows")
            if rows < buffer.height {
                XCTAssertEqual(buffer.pixel(x: 3, y: buffer.height - 1).a, 0, "rows not decoded are transparent")
                XCTAssertTrue(image.hasAlpha)
            }
            rowCounts.append(rows)
        }
        XCTAssertGreaterThan(rowCounts.count, 3, "a partial image for most chunks: \(rowCounts)")
        XCTAssertEqual(rowCounts, rowCounts.sorted(), "rows so far never shrink")
        XCTAssertEqual(Set(rowCounts).count, rowCounts.count, "each partial image has new rows")
        IncrementalFeeding.assertMatchesOneShot(decoder, data, "baseline")
        XCTAssertTrue(decoder.isFinalFromStream, "the stream's rows are the final image")
    }

    /// The decoder alternates two buffers for partial images; one an image still holds is never written.
    /// Here every other partial image is kept: each must keep the pixels it was made with, and each must show
    /// the final image's rows so far (baseline) whether its buffer was reused or fresh.
    func testPartialImagesKeepTheirPixelsWhileBuffersAlternate() throws {
        let source = try DownsampleFixtures.photo(width: 160, height: 120)
        for progressive in [false, true] {
            let data = try DownsampleFixtures.encode(source, as: .jpeg, progressive: progressive)
            let full = try ImageDecoder.decode(data).firstFrame.buffer
            var kept: [(image: Image, snapshot: [UInt8])] = []
            var count = 0
            let decoder = try IncrementalFeeding.feed(data, sizes: { 300 }) { image, _ in
                let buffer = image.firstFrame.buffer
                if !progressive {
                    let rows = IncrementalFeeding.opaqueRowPrefix(buffer)
                    XCTAssertTrue(IncrementalFeeding.rowsEqual(buffer, full, count: rows), "partial \(count)")
                    XCTAssertEqual(rows, buffer.height - IncrementalFeeding.transparentRowSuffix(buffer),
                                   "rows after the decoded ones are transparent (partial \(count))")
                }
                if count % 2 == 0 { kept.append((image, buffer.packedBytes)) }
                count += 1
            }
            XCTAssertGreaterThan(count, progressive ? 1 : 4, "progressive \(progressive)")
            if !progressive { XCTAssertGreaterThan(decoder.spareBufferReuses, 0, "dropped partials' buffers were reused") }
            for (n, entry) in kept.enumerated() {
                XCTAssertEqual(entry.image.firstFrame.buffer.packedBytes, entry.snapshot,
                               "kept partial \(n) unchanged (progressive \(progressive))")
            }
            IncrementalFeeding.assertMatchesOneShot(decoder, data, "alternating buffers, progressive \(progressive)")
        }
    }

    func testBaselineAndProgressiveRandomChunksEqualOneShot() throws {
        let source = try DownsampleFixtures.photo(width: 203, height: 117)
        for progressive in [false, true] {
            let data = try DownsampleFixtures.encode(source, as: .jpeg, progressive: progressive)
            for seed: UInt64 in [1, 2, 3, 4] {
                var random = SplitMix64(seed: seed)
                let decoder = try IncrementalFeeding.feed(data) { 1 + random.next(upTo: 900) }
                IncrementalFeeding.assertMatchesOneShot(decoder, data, "progressive \(progressive) seed \(seed)")
                XCTAssertTrue(decoder.isFinalFromStream)
                // Truncated: the one-shot result for the same bytes (a partial image with libjpeg's fill).
                let cut = Data(data.prefix(data.count / 3 + random.next(upTo: data.count / 2)))
                let truncated = try IncrementalFeeding.feed(cut) { 1 + random.next(upTo: 900) }
                IncrementalFeeding.assertMatchesOneShot(truncated, cut, "progressive \(progressive) cut at \(cut.count)")
                XCTAssertFalse(truncated.isFinalFromStream)
            }
        }
    }

    func testByteByByteEqualsOneShot() throws {
        let source = try DownsampleFixtures.photo(width: 48, height: 40)
        for progressive in [false, true] {
            let data = try DownsampleFixtures.encode(source, as: .jpeg, progressive: progressive)
            let decoder = try IncrementalFeeding.feed(data) { 1 }
            IncrementalFeeding.assertMatchesOneShot(decoder, data, "byte by byte, progressive \(progressive)")
        }
        let small = try jpegEntries(maxBytes: 4000).filter(\.isExpectedOK).prefix(4)
        for entry in small {
            let data = try Data(contentsOf: entry.url)
            let decoder = try IncrementalFeeding.feed(data) { 1 }
            IncrementalFeeding.assertMatchesOneShot(decoder, data, "\(entry.path) byte by byte")
        }
    }

    func testCorpusRandomChunksAndTruncationsEqualOneShot() throws {
        let entries = try jpegEntries(maxBytes: 150_000)
        XCTAssertGreaterThan(entries.count, 20)
        var random = SplitMix64(seed: 31)
        for entry in entries {
            let full = try Data(contentsOf: entry.url)
            let decoder = try IncrementalFeeding.feed(full) { 1 + random.next(upTo: 4096) }
            IncrementalFeeding.assertMatchesOneShot(decoder, full, entry.path)
            let cut = Data(full.prefix(1 + random.next(upTo: max(1, full.count - 1))))
            let truncated = try IncrementalFeeding.feed(cut) { 1 + random.next(upTo: 2048) }
            IncrementalFeeding.assertMatchesOneShot(truncated, cut, "\(entry.path) cut at \(cut.count)")
        }
    }
}
