@_spi(QualityModel) @testable import ImageCodec
import TestSupport
import XCTest

/// Automatic quality's scored WebP settings (`EncodeOptions.quantisesAlpha`, `.webPNoiseShaping`): an alpha plane
/// quantised at the colour's quality, never under 16 levels, and noise shaping 80 on large outputs; and the attack on the second: the score is
/// measured on mid grey, so a test composites the same output on black and on white, where an alpha error shows at
/// twice the contrast.
final class ScoredWebPSettingsTests: XCTestCase {
    /// What libwebp is told: the quality (at least 70) as alpha quality and the noise shaping asked for; its
    /// defaults (lossless alpha, 50) without; lossless output untouched; a shaping out of range clamped.
    func testConfigCarriesTheSettingsOnlyForLossyOutput() throws {
        var options = EncodeOptions(quality: 0.3)
        var config = try WebPEncoder.makeConfig(options, hasAlpha: true)
        XCTAssertEqual(config.sns_strength, 50)
        XCTAssertEqual(config.alpha_quality, 100)
        options.quantisesAlpha = true
        for (quality, alpha) in [(0.0, 70), (0.3, 70), (0.7, 70), (0.71, 71), (0.874, 87), (1.0, 100)] as [(Double, Int32)] {
            options.quality = quality
            config = try WebPEncoder.makeConfig(options, hasAlpha: true)
            XCTAssertEqual(config.alpha_quality, alpha, "quality \(quality)")
            XCTAssertEqual(config.sns_strength, 50)
        }
        for (asked, written) in [(80, 80), (0, 0), (-5, 0), (250, 100)] as [(Int32, Int32)] {
            options.webPNoiseShaping = asked
            XCTAssertEqual(try WebPEncoder.makeConfig(options, hasAlpha: false).sns_strength, written)
        }
        options.isLossless = true
        config = try WebPEncoder.makeConfig(options, hasAlpha: true)
        XCTAssertEqual(config.alpha_quality, 100)
        XCTAssertEqual(config.lossless, 1)
    }

    /// Noise shaping by output size: libwebp's 50 under `largeOutputPixels` (a 400×300 thumbnail), 80 from it
    /// (1200 px wide), exactly at the boundary and one pixel under.
    func testNoiseShapingFollowsTheOutputSize() {
        let boundary = WebPEncoder.largeOutputPixels
        XCTAssertEqual(WebPEncoder.scoredNoiseShaping(pixelCount: 400 * 300), 50)
        XCTAssertEqual(WebPEncoder.scoredNoiseShaping(pixelCount: boundary - 1), 50)
        XCTAssertEqual(WebPEncoder.scoredNoiseShaping(pixelCount: boundary), 80)
        XCTAssertEqual(WebPEncoder.scoredNoiseShaping(pixelCount: 1200 * 800), 80)
        XCTAssertEqual(WebPEncoder.scoredNoiseShaping(pixelCount: 0), 50)
    }

    /// A horizontal ramp of all 256 alpha values: kept exactly without the setting; quantised to at most 16 levels
    /// (not libwebp's 6 at quality 20: the floor) at a low quality, and to many more at quality 90.
    func testAlphaLevelsFollowTheQualityAboveAFloor() throws {
        let ramp = try Self.alphaRamp()
        func levels(_ quality: Double, scored: Bool) throws -> Int {
            var options = EncodeOptions(quality: quality)
            options.quantisesAlpha = scored
            options.usesSharpYUV = scored
            let decoded = try ImageDecoder.decode(try WebPEncoder.encode(ramp, options: options)).firstFrame.buffer
            return Set(Self.alphaValues(decoded)).count
        }
        XCTAssertEqual(try levels(0.2, scored: false), 256)
        let low = try levels(0.2, scored: true)
        XCTAssertGreaterThan(low, 12, "the floor of 16 levels")
        XCTAssertLessThanOrEqual(low, 16)
        XCTAssertGreaterThan(try levels(0.9, scored: true), 100)
    }

    /// The attack: a soft drop shadow (alpha 0…0.55 over 40 px) and an antialiased dark disc, written at q=auto
    /// (`.medium`, 70 on grey). Composited on black and on white it still reaches the target. With a floor of 12
    /// levels it did not: 68.0 on white, where the quantised shadow was most of the distortion (the search stops
    /// where grey reaches 70, and grey halves an alpha error's contrast). It also shows that the quantised alpha
    /// saves bytes against lossless alpha at the same colour quality.
    func testSoftShadowHoldsOnBlackAndWhite() throws {
        // Under and over `WebPEncoder.largeOutputPixels`: noise shaping 50 and 80.
        for (width, height) in [(320, 240), (640, 480)] {
            let source = try SoftShadow.image(width: width, height: height)
            let report = try AutomaticQuality.encode(source, format: .webp, target: .medium, options: EncodeOptions()) {
                try WebPEncoder.encode($0, options: $1)
            }
            XCTAssertFalse(report.usedFallback)
            let decoded = try ImageDecoder.decode(report.data).firstFrame.buffer
            let grey = try SSIMULACRA2.score(reference: source, distorted: decoded)
            XCTAssertGreaterThanOrEqual(grey, QualityTarget.medium.minimumScore)
            for (name, colour) in [("black", RGBA(r: 0, g: 0, b: 0)), ("white", RGBA(r: 255, g: 255, b: 255))] {
                let score = try SSIMULACRA2.score(reference: source.composited(over: colour),
                                                  distorted: decoded.composited(over: colour))
                print("soft shadow \(width)×\(height) at q\(report.quality): grey \(grey), \(name) \(score), \(report.data.count) B")
                XCTAssertGreaterThanOrEqual(score, QualityTarget.medium.minimumScore, "\(width)×\(height) on \(name)")
            }
            var lossless = EncodeOptions(quality: report.encodedQuality)
            lossless.usesSharpYUV = true
            XCTAssertLessThan(report.data.count, try WebPEncoder.encode(source, options: lossless).count)
        }
    }

    static func alphaRamp() throws -> PixelBuffer {
        var bytes: [UInt8] = []
        for _ in 0..<32 {
            for x in 0..<256 { bytes += [200, 60, 40, UInt8(x)] }
        }
        return try PixelBuffer(width: 256, height: 32, pixelFormat: .rgba8, bytes: bytes)
    }

    static func alphaValues(_ buffer: PixelBuffer) -> [UInt8] {
        let straight = buffer.converted(to: .rgba8)
        return straight.withUnsafeBytes { raw in
            (0..<straight.height).flatMap { y in (0..<straight.width).map { raw[y * straight.bytesPerRow + $0 * 4 + 3] } }
        }
    }
}
