import Foundation
import ImageCodec
import TestSupport
import WebImageJXL
import XCTest

/// The JPEG XL module against `corpus/modern/jxl` (libjxl 0.7 on Debian 12) and `djxl`.
final class JXLDecoderTests: XCTestCase {
    private func entries() throws -> [ModernCorpus.Entry] {
        do { return try ModernCorpus.entries(format: "jxl") } catch let missing as Corpus.Missing { throw XCTSkip(missing.description) }
    }

    private func file(_ suffix: String) throws -> URL { try XCTUnwrap(entries().first { $0.path.hasSuffix(suffix) }).url }

    func testEveryManifestRowDecodesOrIsRejectedAsExpected() throws {
        let (checked, mismatches) = try ModernCodecChecks.manifestMismatches(format: "jxl") { try JXLDecoder().decode($0, options: $1) }
        XCTAssertGreaterThan(checked, 20)
        XCTAssertEqual(mismatches, [], mismatches.joined(separator: "\n"))
    }

    func testRegisteredCodecIsPickedByImageDecoder() throws {
        let data = try Data(contentsOf: try file("conformance__bicycles.jxl"))
        // ImageService registers the codec modules in `.shared` for good; in a test process that ran a server test
        // first, the format is decodable already.
        if !ImageCodecRegistry.shared.canDecode(.jpegXL) {
            XCTAssertThrowsError(try ImageDecoder.decode(data)) { XCTAssertEqual($0 as? ImageCodecError, .unsupportedFormat(.jpegXL)) }
        }
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        XCTAssertTrue(ImageFormat.jpegXL.isDecodable)
        let image = try ImageDecoder.decode(data)
        XCTAssertEqual(image.format, .jpegXL)
        XCTAssertEqual(image.width, 1024)
        XCTAssertEqual(image.height, 631)
        XCTAssertTrue(ImageCodecRegistry.shared.additionalMIMETypes.contains("image/jxl"))
    }

    func testAnimationHasDurationsAndLoopCount() throws {
        let data = try Data(contentsOf: try file("animation_spline.jxl"))
        let image = try JXLDecoder().decode(data, options: DecodeOptions())
        XCTAssertEqual(image.frameCount, 60)
        XCTAssertEqual(image.duration(at: 0), 0.02, accuracy: 1e-9, "20 ms frames (at least 0.011 s: kept)")
        let info = try JXLDecoder().info(data)
        XCTAssertEqual(info.frameCount, 60)
        let icos = try JXLDecoder().info(try Data(contentsOf: try file("animation_icos4d.jxl")))
        XCTAssertEqual(icos.frameCount, 48)
        XCTAssertEqual(icos.loopCount, 0, "num_loops 0: forever")
        XCTAssertEqual(icos.storedLoopCount, 0)
        XCTAssertTrue(icos.hasAlpha)
        XCTAssertGreaterThan(icos.durations[1], 0)
        XCTAssertNotEqual(try image.frame(at: 30).buffer, image.firstFrame.buffer)
        XCTAssertEqual(try JXLDecoder().decode(data, options: DecodeOptions(firstFrameOnly: true)).frameCount, 1)
    }

    /// Our pixels against `djxl`'s PNG for the stills.
    func testPixelsMatchDjxl() throws {
        guard ReferenceDecoder.path(of: "djxl") != nil else { throw XCTSkip("djxl not installed (libjxl-tools)") }
        var compared = 0
        // djxl 0.7 writes the PNG of an image with 9- to 12-bit samples without rescaling them to 16 bits
        // (alpha_triangles' opaque alpha comes out as 63 of 255; checked by decoding its PNG by hand), so those
        // three are compared with ours nowhere but in the manifest test.
        let odd = ["alpha_triangles", "alpha_nonpremultiplied", "blendmodes"]
        for entry in try entries() where entry.isExpectedOK && entry.frames == 1 && entry.width * entry.height <= 1_200_000
            && !odd.contains(where: entry.path.contains) {
            let image = try JXLDecoder().decode(try Data(contentsOf: entry.url), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
            let png = FileManager.default.temporaryDirectory.appendingPathComponent("djxl-\(UUID().uuidString).png")
            defer { do { try FileManager.default.removeItem(at: png) } catch { /* not written */ } }
            _ = try ReferenceDecoder.run("djxl", [entry.url.path, png.path, "--num_threads=0"])
            let worst = try ModernCodecChecks.maxDifference(image.firstFrame.buffer, referencePNG: png)
            XCTAssertNotNil(worst, "\(entry.path): size differs from djxl's")
            XCTAssertLessThanOrEqual(worst ?? .max, 2, entry.path)
            compared += 1
        }
        XCTAssertGreaterThanOrEqual(compared, 8)
    }

    func testTruncationsAndByteFlipsNeverCrash() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["WEBIMAGE_SEED"] ?? "") ?? 0x7A1
        let files = try entries().filter { $0.isExpectedOK && $0.width * $0.height <= 600_000 }.map(\.url)
        let failures = try ModernCodecChecks.mutationFailures(files: files, seed: seed, variantsPerFile: 8) {
            try JXLDecoder().decode($0, options: DecodeOptions(limits: ModernCodecChecks.manifestLimits))
        }
        XCTAssertEqual(failures, [], "seed \(seed) (WEBIMAGE_SEED to reproduce)")
    }

    func testFrameLimitsAreCheckedPerFrameHeader() throws {
        let data = try Data(contentsOf: try file("animation_icos4d.jxl"))
        XCTAssertThrowsError(try JXLDecoder().decode(data, options: DecodeOptions(limits: DecodeLimits(maxFrameCount: 10)))) {
            XCTAssertEqual($0 as? ImageCodecError, .limitExceeded(limit: .frameCount, actual: 11, maximum: 10))
        }
        XCTAssertThrowsError(try JXLDecoder().decode(data, options: DecodeOptions(limits: DecodeLimits(maxTotalPixels: 128 * 128 * 5)))) {
            XCTAssertEqual($0 as? ImageCodecError, .limitExceeded(limit: .totalPixels, actual: 128 * 128 * 6, maximum: 128 * 128 * 5))
        }
    }

    /// Partial images through `IncrementalDecoder` while the bytes arrive, then exactly the one-shot image.
    func testIncrementalDecoderShowsProgressivePreviews() throws {
        let registrations = JXLCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        let data = try Data(contentsOf: try file("conformance__bicycles.jxl"))
        let decoder = IncrementalDecoder(options: DecodeOptions(pixelFormat: .rgba8))
        var partials: [Image] = []
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + data.count / 8 + 1)
            try decoder.update(data.subdata(in: offset..<end), isFinal: false)
            offset = end
            if let image = try decoder.makeImage(), partials.last !== image { partials.append(image) }
        }
        XCTAssertGreaterThan(partials.count, 2, "previews while the data arrives")
        XCTAssertTrue(partials.allSatisfy { $0.isPartial && $0.width == 1024 && $0.height == 631 })
        try decoder.update(Data(), isFinal: true)
        let final = try XCTUnwrap(decoder.makeImage())
        XCTAssertFalse(final.isPartial)
        XCTAssertEqual(final.firstFrame.buffer, try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer)
        // The previews get closer to the final image.
        let first = try XCTUnwrap(ModernCodecChecks.meanDifference(partials[0].firstFrame.buffer, final.firstFrame.buffer))
        let last = try XCTUnwrap(ModernCodecChecks.meanDifference(partials[partials.count - 1].firstFrame.buffer, final.firstFrame.buffer))
        XCTAssertLessThan(last, first)
    }
}
