import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// JPEG decoding over the corpus: manifest facts, rejects, hostile variants.
final class JPEGConformanceTests: XCTestCase {
    func testEveryAcceptedJPEGDecodesWithManifestFacts() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "jpeg").filter(\.isExpectedOK)
        XCTAssertGreaterThan(entries.count, 50)
        for entry in entries { try JPEGPNGCorpusCheck.checkAccepted(entry) }
    }

    func testEveryRejectedJPEGThrows() throws {
        let entries = try JPEGPNGCorpusCheck.entries(format: "jpeg").filter { !$0.isExpectedOK }
        XCTAssertGreaterThan(entries.count, 10)
        for entry in entries { try JPEGPNGCorpusCheck.checkRejected(entry) }
    }

    /// Documented choice: a JPEG with a premature end decodes as a partial image (`isPartial`).
    func testTruncatedJPEGIsPartial() throws {
        let entry = try XCTUnwrap(try JPEGPNGCorpusCheck.entries(format: "jpeg").first { $0.path.hasSuffix("vips_truncated.jpg") })
        let image = try ImageDecoder.decode(try Data(contentsOf: entry.url))
        XCTAssertTrue(image.isPartial)
        XCTAssertEqual(image.width, 290)
        let whole = try JPEGEncoder.encode(try PixelBuffer(width: 8, height: 8), options: EncodeOptions())
        XCTAssertFalse(try ImageDecoder.decode(whole).isPartial)
    }

    func testHugeDeclaredSizeIsRefusedFromTheHeader() throws {
        let entry = try XCTUnwrap(try JPEGPNGCorpusCheck.entries(format: "jpeg").first { $0.path.hasSuffix("jpegdec_its_6903d4538fd33c8fd0ded32cb30d618e.jpg") })
        let data = try Data(contentsOf: entry.url)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, _, _) = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try ImageDecoder.info(data).width, 49157)
    }

    /// The shim's DCT-domain scaling (for thumbnails): 1/2, 1/4, 1/8 give ceil-divided sizes and sane pixels.
    func testDCTScalingGivesSmallerOutputs() throws {
        let source = try JPEGPNGRoundTripTests.photoPattern(width: 203, height: 101)
        let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.95))
        for denominator in [1, 2, 4, 8] {
            let (buffer, width, height) = try data.withUnsafeBytes { bytes -> (PixelBuffer, Int, Int) in
                let session = try JPEGDecodeSession(bytes: bytes)
                _ = try session.readHeader()
                let size = try session.setScale(1, denominator)
                var buffer = try PixelBuffer(width: size.width, height: size.height, pixelFormat: .rgba8)
                let stride = buffer.bytesPerRow
                let outcome = try buffer.withUnsafeMutableBytes { try session.decode(into: $0.baseAddress!, bytesPerRow: stride) }
                XCTAssertEqual(outcome.rowsDecoded, size.height)
                return (buffer, size.width, size.height)
            }
            XCTAssertEqual(width, (203 + denominator - 1) / denominator)
            XCTAssertEqual(height, (101 + denominator - 1) / denominator)
            // The centre pixel is close to the source's centre.
            let ours = buffer.pixel(x: width / 2, y: height / 2)
            let reference = source.pixel(x: (width / 2) * denominator, y: (height / 2) * denominator)
            XCTAssertLessThan(abs(Int(ours.g) - Int(reference.g)), 24, "1/\(denominator)")
        }
    }

    func testHostileJPEGVariantsNeverCrash() throws {
        let entries = try Corpus.entries().filter { $0.format == "jpeg" && !$0.isHuge && ($0.bytes ?? 0) < 3_000_000 }
        var seed: UInt64 = 1
        var total = 0
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let result = JPEGPNGCorpusCheck.hostileVariants(of: data, seed: seed)
            total += result.decoded + result.failed
            seed += 1
        }
        XCTAssertEqual(total, entries.count * 20)
    }
}
