@testable import ImageCodec
@testable import WebImageAVIF
import XCTest

/// Automatic quality's AVIF grid (`AutomaticQuality.Grid.of(.avif)`) against the encoder's own quantizer mapping
/// (`AVIFEncoder.quantizer(for:)`): one level per quantizer, no level wasted or skipped, and the predictor's start
/// (a whole quality) on the level written with that quality's quantizer.
final class AVIFQuantizerGridTests: XCTestCase {
    func testEachLevelIsOneQuantizer() {
        let grid = AutomaticQuality.Grid.of(.avif)
        let quantizers = (1...grid.levels).map { AVIFEncoder.quantizer(for: EncodeOptions(quality: grid.quality($0))) }
        XCTAssertEqual(quantizers, (0...62).reversed().map(Int32.init), "level k is quantizer 63 − k")
        for percent in 1...100 {
            XCTAssertEqual(AVIFEncoder.quantizer(for: EncodeOptions(quality: grid.quality(grid.level(percent: percent)))),
                           AVIFEncoder.quantizer(for: EncodeOptions(quality: Double(percent) / 100)), "quality \(percent)")
        }
        var lossless = EncodeOptions(quality: 0.2)
        lossless.isLossless = true
        XCTAssertEqual(AVIFEncoder.quantizer(for: lossless), 0)
        XCTAssertEqual(AVIFEncoder.quantizer(for: EncodeOptions(quality: -3)), 63, "clamped")
        XCTAssertEqual(AVIFEncoder.quantizer(for: EncodeOptions(quality: 7)), 0, "clamped")
        XCTAssertEqual(AVIFEncoder.quantizer(for: EncodeOptions(quality: .nan)), AVIFEncoder.quantizer(for: EncodeOptions()),
                       "NaN is the default quality (it used to trap in Int32(_:))")
    }
}

/// An unreachable target for AVIF and JPEG XL: the search scores the top of the grid (quantizer 0, distance 0.1),
/// which misses, so the fallback must not be quality 97 (a measured miss): it is lossless, exact.
final class AVIFUnreachableTargetTests: XCTestCase {
    func testAMissAtTheTopFallsBackToLossless() throws {
        guard AVIFCodec.isEncodingAvailable else { throw XCTSkip("this libavif has no AV1 encoder") }
        let registrations = AVIFCodec.register()
        defer { registrations.forEach(ImageCodecRegistry.shared.unregister) }
        var source = try PixelBuffer(width: 48, height: 40)
        var random = SystemRandomNumberGenerator()
        for y in 0..<40 {
            for x in 0..<48 {
                source.setPixel(x: x, y: y, to: RGBA(r: UInt8.random(in: 0...255, using: &random), g: UInt8(x * 5),
                                                     b: UInt8(y * 6), a: 255))
            }
        }
        let report = try AutomaticQuality.encode(source, format: .avif, target: QualityTarget(minimumScore: 100),
                                                 options: EncodeOptions()) { buffer, options in
            try AVIFEncoder().encode([ImageFrame(buffer: buffer)], format: .avif, loopCount: 0, options: options)
        }
        XCTAssertTrue(report.usedFallback)
        XCTAssertTrue(report.tries.contains { $0.level == AutomaticQuality.Grid.of(.avif).levels }, "\(report.tries)")
        let decoded = try ImageDecoder.decode(report.data, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
        for y in 0..<40 {
            for x in 0..<48 { XCTAssertEqual(decoded.pixel(x: x, y: y), source.pixel(x: x, y: y), "(\(x), \(y))") }
        }
    }
}
