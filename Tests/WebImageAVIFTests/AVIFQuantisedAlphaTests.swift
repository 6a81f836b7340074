import Foundation
@testable import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// AVIF's alpha plane under automatic quality (`EncodeOptions.quantisesAlpha`): coded at the colour's quantizer
/// instead of at most 10, and the q=auto output of a soft shadow still holds the target on grey, black and white.
final class AVIFQuantisedAlphaTests: XCTestCase {
    /// The mapping: lossless 0; quantised follows the colour; otherwise capped at 10 (both sides of the cap).
    func testAlphaQuantizerFollowsTheColourOnlyWhenAsked() {
        var options = EncodeOptions(quality: 0.5)
        XCTAssertEqual(AVIFEncoder.alphaQuantizer(for: options, colour: 31), 10)
        XCTAssertEqual(AVIFEncoder.alphaQuantizer(for: options, colour: 9), 9)
        options.quantisesAlpha = true
        XCTAssertEqual(AVIFEncoder.alphaQuantizer(for: options, colour: 31), 31)
        XCTAssertEqual(AVIFEncoder.alphaQuantizer(for: options, colour: 63), 63)
        options.isLossless = true
        XCTAssertEqual(AVIFEncoder.alphaQuantizer(for: options, colour: 31), 0)
    }

    /// A dark disc over a soft shadow on transparency, 320×240, `.medium`: the output scores at least 70 on grey
    /// (the metric's), on black and on white, and is smaller than the same quality with alpha capped at 10.
    func testSoftShadowHoldsOnEveryBackgroundInFewerBytes() throws {
        guard AVIFCodec.isEncodingAvailable else {
            throw XCTSkip("this libavif has no AV1 encoder (\(AVIFCodec.codecVersions)): AVIF encoding is not offered")
        }
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        let source = try SoftShadow.image(width: 320, height: 240)
        let encoder = AVIFEncoder()
        let report = try AutomaticQuality.encode(source, format: .avif, target: .medium, options: EncodeOptions()) {
            try encoder.encode([ImageFrame(buffer: $0)], format: .avif, loopCount: 0, options: $1)
        }
        XCTAssertFalse(report.usedFallback)
        let decoded = try ImageDecoder.decode(report.data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        XCTAssertGreaterThanOrEqual(try SSIMULACRA2.score(reference: source, distorted: decoded), 70)
        for colour in ScoringReference.backgrounds {
            let score = try SSIMULACRA2.score(reference: source.composited(over: colour), distorted: decoded.composited(over: colour))
            XCTAssertGreaterThanOrEqual(score, 70, "\(colour)")
        }
        let capped = try encoder.encode([ImageFrame(buffer: source)], format: .avif, loopCount: 0,
                                        options: EncodeOptions(quality: report.encodedQuality))
        print("AVIF soft shadow at q\(report.quality): \(report.data.count) B, alpha capped at 10: \(capped.count) B")
        XCTAssertLessThan(report.data.count, capped.count)
    }
}
