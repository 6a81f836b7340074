@testable import ImageCodec
import TestSupport
import XCTest

/// Review 18: q=auto WebP through `ImageEncoder` (which now encodes through `WebPEncoder.SharpYUVSource`) against the
/// same search on the plain registry path, on edge inputs; and the registry's "first encoder that succeeds" contract.
final class Review18SharpYUVWiringTests: XCTestCase {
    /// The outcome of an encode as something comparable: the bytes, or the error's text.
    private func outcome(_ body: () throws -> Data) -> String {
        do { return "ok \(try body().base64EncodedString())" } catch { return "error \(error)" }
    }

    private func viaImageEncoder(_ input: PixelBuffer, options: EncodeOptions) -> String {
        outcome {
            var encoder = ImageEncoder(format: .webp, options: options)
            encoder.addFrame(input)
            return try encoder.encode()
        }
    }

    private func viaPlainSearch(_ input: PixelBuffer, options: EncodeOptions) -> String {
        outcome {
            try AutomaticQuality.encode(input, format: .webp, target: options.automaticQuality!, options: options) {
                try ImageCodecRegistry.shared.encode([ImageFrame(buffer: $0)], format: .webp, loopCount: 0, options: $1)
            }.data
        }
    }

    private func solid(_ width: Int, _ height: Int, _ pixel: RGBA, format: PixelBuffer.PixelFormat = .rgba8) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: format)
        for y in 0..<height { for x in 0..<width { buffer.setPixel(x: x, y: y, to: pixel) } }
        return buffer
    }

    func testEdgeInputsGiveTheSameOutcomeAsThePlainSearch() throws {
        var inputs: [(String, PixelBuffer)] = [
            ("1x1", try GIFWebPTestImages.photoLike(width: 1, height: 1, seed: 1)),
            ("1x37", try GIFWebPTestImages.photoLike(width: 1, height: 37, seed: 2)),
            ("37x1", try GIFWebPTestImages.photoLike(width: 37, height: 1, seed: 3)),
            ("17x9 alpha", try GIFWebPTestImages.photoLike(width: 17, height: 9, seed: 4, alpha: true)),
            ("fully transparent", try solid(24, 20, RGBA(r: 200, g: 10, b: 90, a: 0))),
            ("premultiplied alpha", try GIFWebPTestImages.photoLike(width: 45, height: 33, seed: 5, alpha: true)
                .converted(to: .rgba8Premultiplied)),
        ]
        // Hidden colour under fully transparent pixels, odd size, blocks straddling the edges.
        var hidden = try GIFWebPTestImages.photoLike(width: 53, height: 41, seed: 6).converted(to: .rgba8)
        for y in 0..<41 { for x in 0..<53 where (x * 7 + y * 3) % 5 == 0 || x > 40 {
            var p = hidden.pixel(x: x, y: y); p.a = 0; hidden.setPixel(x: x, y: y, to: p)
        } }
        inputs.append(("hidden colour", hidden))
        for (name, input) in inputs {
            for effort in EncodeEffort.allCases {
                for target in [QualityTarget.medium, .high] {
                    var options = EncodeOptions(effort: effort)
                    options.automaticQuality = target
                    XCTAssertEqual(viaImageEncoder(input, options: options), viaPlainSearch(input, options: options),
                                   "\(name) \(effort) \(target.minimumScore)")
                }
            }
        }
    }

    /// `ImageEncoder.encode()` documents "the first registered encoder of `format` that succeeds". With the built-in
    /// encoder first and another WebP encoder behind it, a picture the built-in encoder refuses (wider than WebP's
    /// 16383) must still reach the next encoder, as it does without automatic quality and did before the change.
    func testAutomaticQualityStillFallsThroughToTheNextEncoder() throws {
        struct Fallback: ImageEncoding {
            var formats: [ImageFormat] { [.webp] }
            var capabilities: ImageCodecCapabilities { [.still] }
            func canEncode(_ format: ImageFormat, frameCount: Int) -> Bool { format == .webp && frameCount == 1 }
            // A stand-in for another WebP writer: lossless bytes the registry's decoders read back.
            func encode(_ frames: [ImageFrame], format: ImageFormat, loopCount: Int, options: EncodeOptions) throws -> Data {
                try PNGEncoder.encode(frames[0].buffer, options: EncodeOptions())
            }
        }
        let registry = ImageCodecRegistry.shared
        let fallback = registry.register(encoder: Fallback())
        // The built-in encoder first again, the other behind it, through the public API only (`encoders` lists the
        // built-in instance last).
        let builtInInstance = try XCTUnwrap(registry.encoders.last)
        XCTAssertTrue(builtInInstance is BuiltInEncoder)
        let builtIn = registry.register(encoder: builtInInstance)
        defer { registry.unregister(builtIn); registry.unregister(fallback) }
        let wide = try solid(16384, 8, RGBA(r: 30, g: 120, b: 200))
        // Without automatic quality the registry falls through.
        var encoder = ImageEncoder(format: .webp, options: EncodeOptions(quality: 0.8))
        encoder.addFrame(wide)
        XCTAssertNoThrow(try encoder.encode(), "fixed quality")
        var options = EncodeOptions()
        options.automaticQuality = .medium
        let plain = viaPlainSearch(wide, options: options)
        XCTAssertTrue(plain.hasPrefix("ok"), plain)
        XCTAssertEqual(viaImageEncoder(wide, options: options), plain, "q=auto must fall through as the registry does")
    }
}
