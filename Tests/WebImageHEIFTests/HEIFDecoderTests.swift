import Foundation
import ImageCodec
import TestSupport
import WebImageHEIF
import XCTest

/// The HEIF module against `corpus/modern/heic` (libheif 1.15 on Debian 12) and `heif-convert`.
final class HEIFDecoderTests: XCTestCase {
    private func entries() throws -> [ModernCorpus.Entry] {
        do { return try ModernCorpus.entries(format: "heic") } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
    }

    private func file(_ suffix: String) throws -> URL { try XCTUnwrap(entries().first { $0.path.hasSuffix(suffix) }).url }

    func testEveryManifestRowDecodesOrIsRejectedAsExpected() throws {
        let (checked, mismatches) = try ModernCodecChecks.manifestMismatches(format: "heic") { try HEIFDecoder().decode($0, options: $1) }
        XCTAssertGreaterThan(checked, 20)
        XCTAssertEqual(mismatches, [], mismatches.joined(separator: "\n"))
    }

    func testRegisteredCodecIsPickedByImageDecoder() throws {
        let data = try Data(contentsOf: try file("sdwebimage__TestImage.heif"))
        XCTAssertEqual(ImageFormat.sniff(data), .heif, "major brand mif1, compatible heic")
        // ImageService registers the codec modules in `.shared` for good; in a test process that ran a server test
        // first, the format is decodable already.
        if !ImageCodecRegistry.shared.canDecode(.heif) {
            XCTAssertThrowsError(try ImageDecoder.decode(data)) { XCTAssertEqual($0 as? ImageCodecError, .unsupportedFormat(.heif)) }
        }
        let registrations = HEIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        XCTAssertTrue(ImageFormat.heif.isDecodable)
        let image = try ImageDecoder.decode(data)
        XCTAssertEqual(image.format, .heif)
        XCTAssertEqual(image.width, 1440)
        XCTAssertEqual(try ImageDecoder.info(data).height, 960)
        XCTAssertTrue(ImageCodecRegistry.shared.additionalMIMETypes.contains("image/heic"))
    }

    /// A file whose header declares 30000×30000 holds a 29×100 image: with limits that allow the declared
    /// size, the buffer comes from the decoded image (29×100), never from the header.
    func testBufferIsSizedFromTheDecodedImage() throws {
        let data = try Data(contentsOf: try file("RGB_8_ispe_30000x30000.heif"))
        XCTAssertThrowsError(try HEIFDecoder().decode(data, options: DecodeOptions())) { error in
            guard case .limitExceeded(_, let actual, _)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertEqual(actual, 900_000_000, "refused from the declared size with the default limits")
        }
        let image = try HEIFDecoder().decode(data, options: DecodeOptions(limits: .none))
        XCTAssertEqual(image.width, 29)
        XCTAssertEqual(image.height, 100)
        let bomb = try Data(contentsOf: try file("RGB_8_ispe_40000x40000.heif"))
        XCTAssertThrowsError(try HEIFDecoder().decode(bomb, options: DecodeOptions())) { error in
            guard case .limitExceeded(_, let actual, _)? = error as? ImageCodecError else { return XCTFail("\(error)") }
            XCTAssertEqual(actual, 1_600_000_000)
        }
    }

    /// Our pixels against `heif-convert`'s PNG (same libheif, then libpng) for the stills it converts.
    func testPixelsMatchHeifConvert() throws {
        guard ReferenceDecoder.path(of: "heif-convert") != nil else { throw XCTSkip("heif-convert not installed (libheif-examples)") }
        var compared = 0
        // heif-convert refuses sequences (.heics) and writes one PNG per top-level image of zPug_3 (-1, -2, -3),
        // not telling which is the primary one.
        for entry in try entries() where entry.isExpectedOK && entry.width * entry.height <= 1_500_000
            && !entry.path.hasSuffix(".heics") && !entry.path.contains("zPug_3") {
            let image = try HEIFDecoder().decode(try Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
            let png = FileManager.default.temporaryDirectory.appendingPathComponent("heif-\(UUID().uuidString).png")
            defer { do { try FileManager.default.removeItem(at: png) } catch { /* not written */ } }
            _ = try ReferenceDecoder.run("heif-convert", [entry.url.path, png.path])
            // heif-convert 1.15 exits 0 with an empty file when libpng refuses the embedded ICC profile
            // ("known incorrect sRGB profile": TestImage.heic, gradient-10b-srgb-alpha): nothing to compare.
            if try Data(contentsOf: png).isEmpty { continue }
            let worst = try ModernCodecChecks.maxDifference(image.firstFrame.buffer, referencePNG: png)
            XCTAssertNotNil(worst, "\(entry.path): size differs from heif-convert's")
            XCTAssertLessThanOrEqual(worst ?? .max, 2, entry.path)
            compared += 1
        }
        XCTAssertGreaterThan(compared, 8)
    }

    func testTruncationsAndByteFlipsNeverCrash() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_SEED"] ?? "") ?? 0x4E1F
        let files = try entries().filter { $0.isExpectedOK && $0.width * $0.height <= 200_000 }.map(\.url)
        let failures = try ModernCodecChecks.mutationFailures(files: files, seed: seed, variantsPerFile: 10) {
            try HEIFDecoder().decode($0, options: DecodeOptions(limits: ModernCodecChecks.manifestLimits))
        }
        XCTAssertEqual(failures, [], "seed \(seed) (WEBIMAGE_SEED to reproduce)")
    }

    func testInfoAndConvertThroughTheCLI() throws {
        let still = try file("pillowheif__RGBA_10__128x128.heif")
        let info = try WebImageCLI.run(["info", still.path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains(#""format":"heif""#), info.stdout)
        XCTAssertTrue(info.stdout.contains(#""width":128,"height":128"#), info.stdout)
        XCTAssertTrue(info.stdout.contains(#""has_alpha":true"#), info.stdout)
        let png = FileManager.default.temporaryDirectory.appendingPathComponent("heif-\(UUID().uuidString).png")
        defer { do { try FileManager.default.removeItem(at: png) } catch { /* not written */ } }
        let convert = try WebImageCLI.run(["convert", still.path, png.path])
        XCTAssertEqual(convert.status, 0, convert.stderr)
        XCTAssertEqual(try ImageDecoder.decode(try Data(contentsOf: png)).width, 128)
    }

    /// The 30000² header bomb, in a child process: refused with little memory.
    func testHeaderBombIsRefusedBeforeAllocating() throws {
        let outcome = try WebImageCLI.runMeasuredConvert(try file("RGB_8_ispe_30000x30000.heif"))
        XCTAssertEqual(outcome.status, 1, outcome.stderr)
        XCTAssertTrue(outcome.stderr.contains("decode limit"), outcome.stderr)
        XCTAssertLessThan(outcome.peakRSS, 150_000_000, "peak RSS \(outcome.peakRSS / 1_000) KB")
    }
}
