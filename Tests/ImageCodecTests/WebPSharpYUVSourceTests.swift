@_spi(QualityModel) @testable import ImageCodec
import TestSupport
import XCTest

/// `WebPEncoder.SharpYUVSource`: one sharp RGB→YUV conversion, encoded many times, writes exactly the bytes a fresh
/// `WebPEncoder.encode` with sharp YUV writes, in any order of settings, with and without alpha (including colour
/// hidden under fully transparent pixels), after a deadline's hook was installed; and automatic quality's WebP
/// output through `ImageEncoder` is byte for byte the output of the search run on the plain encoder.
final class WebPSharpYUVSourceTests: XCTestCase {
    /// A picture whose fully transparent pixels hide varied colour (what libwebp flattens when `exact` is off).
    private func transparentHoles() throws -> PixelBuffer {
        var buffer = try GIFWebPTestImages.photoLike(width: 131, height: 77, seed: 11, alpha: false).converted(to: .rgba8)
        let stride = buffer.bytesPerRow
        buffer.withUnsafeMutableBytes { bytes in
            for y in 20..<60 {
                for x in 30..<100 where (x / 16 + y / 16) % 2 == 0 {
                    bytes[y * stride + x * 4 + 3] = 0
                }
            }
        }
        return buffer
    }

    func testReusedConversionWritesTheSameBytesAsAFreshEncode() throws {
        let opaque = try GIFWebPTestImages.photoLike(width: 203, height: 117, seed: 3)
        let pictures = [opaque, try transparentHoles(), try GIFWebPTestImages.photoLike(width: 64, height: 48, seed: 5, alpha: true)]
        for picture in pictures {
            let source = try WebPEncoder.SharpYUVSource(picture)
            // Qualities out of order and repeated, both efforts the search uses: each encode must not depend on
            // what the previous one did to the picture.
            for (quality, effort) in [(30, EncodeEffort.balanced), (90, .balanced), (30, .balanced), (62, .smallest),
                                      (5, .balanced), (62, .smallest), (100, .balanced)] {
                var options = EncodeOptions(quality: Double(quality) / 100, effort: effort)
                options.usesSharpYUV = true
                let fresh = try WebPEncoder.encode(picture, options: options)
                let reused = try source.encode(options: options)
                XCTAssertEqual(reused, fresh, "\(picture.width)×\(picture.height) opaque \(picture.isOpaque) q\(quality) \(effort)")
            }
        }
    }

    /// A deadline installs libwebp's progress hook pointing into the encode's frame; the next encode of the same
    /// picture without a deadline must not reach it (it would read a dead stack slot) and writes the same bytes.
    func testAnEncodeAfterADeadlineEncodeIsUnaffected() throws {
        let picture = try GIFWebPTestImages.photoLike(width: 150, height: 100, seed: 9)
        let source = try WebPEncoder.SharpYUVSource(picture)
        var options = EncodeOptions(quality: 0.7)
        options.usesSharpYUV = true
        let plain = try source.encode(options: options)
        var timed = options
        timed.deadline = ContinuousClock.now.advanced(by: .seconds(3600))
        XCTAssertEqual(try source.encode(options: timed), plain)
        XCTAssertEqual(try source.encode(options: options), plain)
        // And past the deadline it stops with the typed error, then still encodes.
        timed.deadline = ContinuousClock.now.advanced(by: .seconds(-1))
        XCTAssertThrowsError(try source.encode(options: timed)) { error in
            guard case .deadlineExceeded = error as? ImageCodecError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try source.encode(options: options), plain)
    }

    /// A deadline that passes while libwebp is encoding stops it through the progress hook (or, if it passed
    /// already, before); either way the typed error, and the same picture then encodes as a fresh one does, many
    /// times over.
    func testAnEncodeStoppedMidwayLeavesThePictureUsable() throws {
        let picture = try GIFWebPTestImages.photoLike(width: 1600, height: 1200, seed: 4, alpha: true)
        let source = try WebPEncoder.SharpYUVSource(picture)
        var options = EncodeOptions(quality: 0.75)
        options.usesSharpYUV = true
        let fresh = try WebPEncoder.encode(picture, options: options)
        for round in 0..<20 {
            var timed = options
            timed.deadline = ContinuousClock.now.advanced(by: .microseconds(200 * round))
            do {
                let data = try source.encode(options: timed)
                XCTAssertEqual(data, fresh, "round \(round) finished in time")
            } catch {
                guard case .deadlineExceeded(.webp) = error as? ImageCodecError else { return XCTFail("round \(round): \(error)") }
            }
            XCTAssertEqual(try source.encode(options: options), fresh, "round \(round): after the stop")
        }
    }

    func testLosslessIsATypedError() throws {
        let source = try WebPEncoder.SharpYUVSource(try GIFWebPTestImages.photoLike(width: 16, height: 16))
        XCTAssertThrowsError(try source.encode(options: EncodeOptions(isLossless: true))) { error in
            guard case .encodingFailed(.webp, _) = error as? ImageCodecError else { return XCTFail("\(error)") }
        }
    }

    /// The wiring: `ImageEncoder`'s q=auto WebP (through the source) against the same search on the plain built-in
    /// encoder, on generated pictures and, when the corpus is present, on three real photographs and a graphic.
    func testAutomaticQualityWebPIsUnchangedByTheSharedConversion() throws {
        var inputs = [try GIFWebPTestImages.photoLike(width: 240, height: 160, seed: 21), try transparentHoles()]
        if let photos = try? QualityCorpus.photos() {
            let chosen = ["kodak_05", "kodak_23", "libvips_Memtrace", "skimage_astronaut"]
            for url in photos where chosen.contains(where: { url.lastPathComponent.hasPrefix($0) }) {
                inputs.append(try QualityCorpus.thumbnail(url, maxPixelSize: 300))
            }
        }
        for (index, input) in inputs.enumerated() {
            for target in [QualityTarget.medium, .high] {
                let plain = try AutomaticQuality.encode(input, format: .webp, target: target, options: EncodeOptions()) {
                    try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
                }
                var options = EncodeOptions()
                options.automaticQuality = target
                var encoder = ImageEncoder(format: .webp, options: options)
                encoder.addFrame(input)
                let shared = try encoder.encode()
                XCTAssertEqual(shared, plain.data, "input \(index) target \(target.minimumScore): q\(plain.quality)")
            }
        }
    }
}
