import Foundation
import ImageCodec
import TestSupport
import XCTest

/// The built `webimage` (which registers the JPEG XL module) on JPEG XL files, in child processes.
final class JXLProcessTests: XCTestCase {
    private func file(_ suffix: String) throws -> URL {
        do { return try ModernCorpus.url(format: "jxl", endingWith: suffix) } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
    }

    /// Codestreams declaring 20000² and 1000000² pixels: refused at `JXL_DEC_BASIC_INFO` with the default
    /// limits, before libjxl allocates (it would take over 1 GB, or abort the process when it cannot).
    func testHeaderBombsAreRefusedBeforeAllocating() throws {
        for name in ["header_20000x20000_truncated.jxl", "header_1000000x1000000_truncated.jxl"] {
            let outcome = try WebImageCLI.runMeasuredConvert(try file(name))
            XCTAssertEqual(outcome.status, 1, outcome.stderr)
            XCTAssertTrue(outcome.stderr.contains("decode limit"), outcome.stderr)
            XCTAssertLessThan(outcome.peakRSS, 150_000_000, "\(name): peak RSS \(outcome.peakRSS / 1_000) KB")
        }
    }

    func testInfoAndConvertHandleJPEGXL() throws {
        let animation = try file("animation_icos4d.jxl")
        let info = try WebImageCLI.run(["info", animation.path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains(#""format":"jxl""#), info.stdout)
        XCTAssertTrue(info.stdout.contains(#""frames":48"#), info.stdout)
        XCTAssertTrue(info.stdout.contains(#""loop_count":0,"plays":0"#), info.stdout)

        let webp = FileManager.default.temporaryDirectory.appendingPathComponent("jxl-\(UUID().uuidString).webp")
        defer { do { try FileManager.default.removeItem(at: webp) } catch { /* not written */ } }
        let convert = try WebImageCLI.run(["convert", animation.path, webp.path])
        XCTAssertEqual(convert.status, 0, convert.stderr)
        let converted = try ImageDecoder.decode(try Data(contentsOf: webp))
        XCTAssertEqual(converted.frameCount, 48)
        XCTAssertEqual(converted.width, 128)
    }
}
