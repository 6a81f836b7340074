import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// PNG decoding over the corpus (PngSuite and others): manifest facts, rejects, bombs, hostile variants.
final class PNGConformanceTests: XCTestCase {
    func testEveryAcceptedPNGDecodesWithManifestFacts() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "png").filter(\.isExpectedOK)
        XCTAssertGreaterThan(entries.count, 150)
        for entry in entries { try JPEGPNGCorpusCheck.checkAccepted(entry) }
    }

    func testEveryRejectedPNGThrowsIncludingPngSuiteXFiles() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "png").filter { !$0.isExpectedOK }
        XCTAssertTrue(entries.contains { $0.path.contains("pngsuite_x") })
        for entry in entries { try JPEGPNGCorpusCheck.checkRejected(entry) }
    }

    func testPixelBombIsRefusedFromIHDRButInfoWorks() throws {
        let entry = try XCTUnwrap(try JPEGPNGCorpusCheck.entries(format: "png").first { $0.path.hasSuffix("65536-uint32-limit.png") })
        let data = try Data(contentsOf: entry.url)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, let actual, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(actual, 65536 * 65536)
        }
        let info = try ImageDecoder.info(data)
        XCTAssertEqual(info.width, 65536)
        XCTAssertEqual(info.height, 65536)
    }

    /// The row-by-row API (for the downsampled decoder) gives the same pixels as a whole decode, Adam7 too.
    func testRowByRowReadingMatchesWholeDecode() throws {
        let source = try JPEGPNGRoundTripTests.photoPattern(width: 37, height: 23, alpha: true)
        for interlaced in [false, true] {
            let data = try PNGEncoder.encode(source, options: EncodeOptions(isProgressive: interlaced))
            var rows = [UInt8](repeating: 0, count: 37 * 23 * 4)
            try data.withUnsafeBytes { bytes in
                let session = try PNGDecodeSession(bytes: bytes)
                let header = try session.readInfo()
                XCTAssertEqual(header.isInterlaced, interlaced)
                let passes = try session.startRows()
                XCTAssertEqual(passes, interlaced ? 7 : 1)
                try rows.withUnsafeMutableBytes { out in
                    for _ in 0..<passes {
                        for y in 0..<23 { try session.readRow(into: out.baseAddress! + y * 37 * 4) }
                    }
                }
                try session.finishRows()
            }
            XCTAssertEqual(rows, source.packedBytes, "interlaced \(interlaced)")
        }
    }

    func testHostilePNGVariantsNeverCrash() throws {
        let entries = try Corpus.entries().filter { $0.format == "png" && !$0.isHuge && ($0.bytes ?? 0) < 3_000_000 }
        var seed: UInt64 = 1000
        var total = 0
        for entry in entries {
            let result = JPEGPNGCorpusCheck.hostileVariants(of: try Data(contentsOf: entry.url), seed: seed)
            total += result.decoded + result.failed
            seed += 1
        }
        XCTAssertEqual(total, entries.count * 20)
    }
}
