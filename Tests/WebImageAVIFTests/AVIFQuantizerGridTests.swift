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
