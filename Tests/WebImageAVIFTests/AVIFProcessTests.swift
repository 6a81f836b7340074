import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// The built `webimage` (which registers the AVIF module) on AVIF files, in child processes.
final class AVIFProcessTests: XCTestCase {
    private func file(_ suffix: String) throws -> URL {
        do { return try ModernCorpus.url(format: "avif", endingWith: suffix) } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
    }

    /// The 305-byte file declaring 16384×16384: libavif 0.11 would upscale its 1×1 frame to 256 Mpx (0.8 GB).
    /// With the limit set before parsing, the child refuses it with little memory.
    func testHeaderBombIsRefusedBeforeAllocating() throws {
        let bomb = try file("ispe_16384x16384.avif")
        let outcome = try WebImageCLI.runMeasuredConvert(bomb, ["--max-pixels", "100000000"])
        XCTAssertEqual(outcome.status, 1, outcome.stderr)
        XCTAssertTrue(outcome.stderr.contains("decode limit"), outcome.stderr)
        XCTAssertLessThan(outcome.peakRSS, 150_000_000, "peak RSS \(outcome.peakRSS / 1_000) KB")
    }

    func testInfoAndConvertHandleAVIF() throws {
        let still = try file("libavif__kodim03_yuv420_8bpc.avif")
        let info = try WebImageCLI.run(["info", still.path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains(#""format":"avif""#), info.stdout)
        XCTAssertTrue(info.stdout.contains(#""width":768,"height":512"#), info.stdout)

        let sequence = try file("star-8bpc-with-alpha.avifs")
        let gif = FileManager.default.temporaryDirectory.appendingPathComponent("avifs-\(UUID().uuidString).gif")
        defer { do { try FileManager.default.removeItem(at: gif) } catch { /* not written */ } }
        let convert = try WebImageCLI.run(["convert", sequence.path, gif.path])
        XCTAssertEqual(convert.status, 0, convert.stderr)
        let converted = try ImageDecoder.decode(try Data(contentsOf: gif))
        XCTAssertEqual(converted.frameCount, 5)
        XCTAssertEqual(converted.width, 159)
    }
}
