@_spi(QualityModel) @testable import ImageCodec
import XCTest

/// The predictor's features on images whose answer is known.
final class QualityFeaturesTests: XCTestCase {
    /// A flat grey image: no gradient, no chroma, all flat; a 1×1 has nothing to compare and no NaN.
    func testFlatImage() throws {
        let grey = try Patterns.solid(width: 31, height: 17, RGBA(r: 90, g: 90, b: 90))
        let f = QualityFeatures(grey)
        XCTAssertEqual(f.lumaGradient, 0)
        XCTAssertEqual(f.chromaGradient, 0, accuracy: 1e-6)
        XCTAssertEqual(f.flatFraction, 1)
        XCTAssertEqual(f.edgeFraction, 0)
        XCTAssertEqual(f.chromaLoss, 0, accuracy: 1e-6)
        XCTAssertEqual(f.pixelCount, 31 * 17)
        let one = QualityFeatures(try PixelBuffer(width: 1, height: 1))
        XCTAssertTrue(one.inputs(target: 70).allSatisfy(\.isFinite))
    }

    /// 1-pixel red/blue stripes: high luma gradient and the most chroma 4:2:0 can drop; the predictor writes JPEG 4:4:4
    /// and does not expect lossy WebP to reach 70. A smooth gradient: the reverse.
    func testColourStripesAgainstASmoothGradient() throws {
        let stripes = try Patterns.make(width: 64, height: 64) { x, _ in x % 2 == 0 ? RGBA(r: 255, g: 0, b: 0) : RGBA(r: 0, g: 0, b: 255) }
        let smooth = try Patterns.make(width: 64, height: 64) { x, y in RGBA(r: UInt8(x * 2), g: UInt8(y * 2), b: 100) }
        let s = QualityFeatures(stripes), g = QualityFeatures(smooth)
        XCTAssertGreaterThan(s.chromaLoss, 50)
        XCTAssertLessThan(g.chromaLoss, 2)
        XCTAssertGreaterThan(s.lumaGradient, 40, "red against blue: 47 levels of luma a pixel")
        XCTAssertGreaterThan(s.lumaGradient, g.lumaGradient * 10)
        XCTAssertTrue(QualityModel.prefersFullChroma(for: 70, features: s))
        XCTAssertFalse(QualityModel.lossyWebPReaches(70, features: s))
        XCTAssertFalse(QualityModel.prefersFullChroma(for: 70, features: g))
        XCTAssertTrue(QualityModel.lossyWebPReaches(70, features: g))
        // Harder images and higher targets need higher qualities.
        for format in [ImageFormat.jpeg, .webp] {
            for check in [QualityTarget.Check.scored, .predicted] {
                XCTAssertLessThan(QualityModel.quality(for: 60, features: g, format: format, subsampling: .yuv420, check: check),
                                  QualityModel.quality(for: 80, features: g, format: format, subsampling: .yuv420, check: check))
            }
        }
    }
}
