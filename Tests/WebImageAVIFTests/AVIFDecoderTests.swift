import Foundation
import ImageCodec
import TestSupport
import WebImageAVIF
import XCTest

/// The AVIF module against `corpus/modern/avif` (libavif 0.11 on Debian 12) and `avifdec`.
final class AVIFDecoderTests: XCTestCase {
    private func entries() throws -> [ModernCorpus.Entry] {
        do { return try ModernCorpus.entries(format: "avif") } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
    }

    func testEveryManifestRowDecodesOrIsRejectedAsExpected() throws {
        // clap 8×10 at (2, -6 from the centre), irot 1 (90° anti-clockwise), imir 1 on the 12×34 coded image
        // (avifdec --info): the manifest gives the coded size; we apply the transforms.
        let displayed = ["clap_irot_imir_non_essential.avif": (10, 8)]
        let (checked, mismatches) = try ModernCodecChecks.manifestMismatches(format: "avif", displayed: displayed) {
            try AVIFDecoder().decode($0, options: $1)
        }
        XCTAssertGreaterThan(checked, 20)
        XCTAssertEqual(mismatches, [], mismatches.joined(separator: "\n"))
    }

    func testRegisteredCodecIsPickedByImageDecoder() throws {
        let file = try XCTUnwrap(entries().first { $0.path.hasSuffix("kodim03_yuv420_8bpc.avif") && !$0.path.contains("derived") })
        let data = try Data(contentsOf: file.url)
        // ImageService registers the codec modules in `.shared` for good; in a test process that ran a server test
        // first, the format is decodable already.
        if !ImageCodecRegistry.shared.canDecode(.avif) {
            XCTAssertThrowsError(try ImageDecoder.decode(data)) { XCTAssertEqual($0 as? ImageCodecError, .unsupportedFormat(.avif)) }
        }
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        XCTAssertTrue(ImageFormat.avif.isDecodable)
        let image = try ImageDecoder.decode(data)
        XCTAssertEqual(image.format, .avif)
        XCTAssertEqual(image.width, 768)
        XCTAssertEqual(try ImageDecoder.info(data).height, 512)
        XCTAssertTrue(ImageCodecRegistry.shared.additionalMIMETypes.contains("image/avif"))
    }

    func testSequenceHasFramesDurationsAndPlaysForever() throws {
        // Its keyframes are 0, 2 and 3: frame 4 needs frame 3 first (libavif seeks to the keyframe).
        let file = try XCTUnwrap(entries().first { $0.path.hasSuffix("colors-animated-12bpc-keyframes-0-2-3.avif") })
        let image = try AVIFDecoder().decode(try Data(contentsOf: file.url), options: DecodeOptions())
        XCTAssertEqual(image.frameCount, 5)
        XCTAssertTrue(image.hasAlpha)
        XCTAssertEqual(image.loopCount, 0, "libavif 0.11 cannot read the loop count: forever")
        XCTAssertNil(image.storedLoopCount)
        for index in 0..<5 { XCTAssertGreaterThan(image.duration(at: index), 0) }
        let last = try image.frame(at: 4).buffer
        XCTAssertEqual(last.width, 64)
        XCTAssertNotEqual(last, image.firstFrame.buffer, "frames differ")
        XCTAssertEqual(try image.frame(at: 4).buffer, last, "a frame decoded again is the same")
    }

    /// libavif 0.11 leaves `irot` to the caller: the 1024×722 coded image shows as 722×1024.
    func testRotationIsApplied() throws {
        let file = try XCTUnwrap(entries().first { $0.path.hasSuffix("kimono.rotate90.avif") })
        let data = try Data(contentsOf: file.url)
        let image = try AVIFDecoder().decode(data, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
        XCTAssertEqual(image.width, 722)
        XCTAssertEqual(image.height, 1024)
        XCTAssertEqual(try AVIFDecoder().info(data).width, 722)
        // irot 3 = 270° anti-clockwise = 90° clockwise; avifdec 0.11 writes the coded orientation.
        guard ReferenceDecoder.path(of: "avifdec") != nil else { throw XCTSkip("avifdec not installed (libavif-bin)") }
        let png = try referencePNG(file.url)
        let coded = try ImageDecoder.decode(try Data(contentsOf: png), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
        let expected = try coded.rotated(by: .clockwise90)
        let worst = try XCTUnwrap(ModernCodecChecks.maxDifference(image.firstFrame.buffer, reference: expected))
        XCTAssertLessThanOrEqual(worst, 2)
    }

    /// Our pixels against `avifdec -d 8`'s PNG for every still without transforms.
    func testPixelsMatchAvifdec() throws {
        guard ReferenceDecoder.path(of: "avifdec") != nil else { throw XCTSkip("avifdec not installed (libavif-bin)") }
        var compared = 0
        for entry in try entries() where entry.isExpectedOK && entry.frames == 1
            && !entry.path.contains("rotate") && !entry.path.contains("clap") && !entry.path.contains("corrupted") {
            let image = try AVIFDecoder().decode(try Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
            let worst = try ModernCodecChecks.maxDifference(image.firstFrame.buffer, referencePNG: try referencePNG(entry.url))
            XCTAssertNotNil(worst, "\(entry.path): size differs from avifdec's")
            // 8-bit sources: the same conversion, rounding only. 10/12-bit: avifdec reduces the depth
            // of the RGB result, we convert straight to 8 bits (libavif's two paths round differently).
            let tolerance = entry.path.contains("10bpc") || entry.path.contains("12bpc") ? 8 : 2
            XCTAssertLessThanOrEqual(worst ?? .max, tolerance, entry.path)
            compared += 1
        }
        XCTAssertGreaterThan(compared, 8)
    }

    private func referencePNG(_ file: URL) throws -> URL {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("avifdec-\(UUID().uuidString).png")
        addTeardownBlock { do { try FileManager.default.removeItem(at: out) } catch { /* not written */ } }
        _ = try ReferenceDecoder.run("avifdec", ["-d", "8", "-j", "1", "--ignore-icc", file.path, out.path])
        return out
    }

    /// The 10- and 12-bit files come out as 8-bit RGBA close to avifdec's `-d 8`.
    func testHighBitDepthIsReducedTo8Bits() throws {
        let file = try XCTUnwrap(entries().first { $0.path.hasSuffix("colors-animated-12bpc-keyframes-0-2-3.avif") })
        let image = try AVIFDecoder().decode(try Data(contentsOf: file.url), options: DecodeOptions(pixelFormat: .rgba8, preloadAllFrames: true))
        XCTAssertEqual(image.frameCount, 5)
        XCTAssertEqual(image.firstFrame.buffer.pixelFormat, .rgba8)
        XCTAssertTrue(image.hasAlpha)
    }

    func testTruncationsAndByteFlipsNeverCrash() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_SEED"] ?? "") ?? 0xA71F
        let files = try entries().filter { $0.isExpectedOK && $0.width * $0.height <= 1_000_000 }.map(\.url)
        let failures = try ModernCodecChecks.mutationFailures(files: files, seed: seed, variantsPerFile: 12) {
            try AVIFDecoder().decode($0, options: DecodeOptions(limits: ModernCodecChecks.manifestLimits, preloadAllFrames: true))
        }
        XCTAssertEqual(failures, [], "seed \(seed) (WEBIMAGE_SEED to reproduce)")
    }

    func testLimitsAreCheckedBeforeDecoding() throws {
        let file = try XCTUnwrap(entries().first { $0.path.hasSuffix("ispe_16384x16384.avif") })
        let data = try Data(contentsOf: file.url)
        XCTAssertThrowsError(try AVIFDecoder().decode(data, options: DecodeOptions(limits: ModernCodecChecks.manifestLimits))) { error in
            guard case .limitExceeded? = error as? ImageCodecError else { return XCTFail("\(error)") }
        }
        // No limits of ours: libavif's own ceiling (16384²) still applies, and ordinary files decode.
        let still = try XCTUnwrap(entries().first { $0.path.hasSuffix("libavif__kodim03_yuv420_8bpc.avif") })
        XCTAssertEqual(try AVIFDecoder().decode(try Data(contentsOf: still.url), options: DecodeOptions(limits: .none)).width, 768)
        let sequence = try XCTUnwrap(entries().first { $0.path.hasSuffix("star-10bpc.avifs") })
        XCTAssertThrowsError(try AVIFDecoder().decode(try Data(contentsOf: sequence.url),
                                                      options: DecodeOptions(limits: DecodeLimits(maxFrameCount: 3)))) { error in
            guard case .limitExceeded? = error as? ImageCodecError else { return XCTFail("\(error)") }
        }
    }
}
