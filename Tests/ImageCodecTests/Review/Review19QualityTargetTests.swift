@_spi(QualityModel) @testable import ImageCodec
import TestSupport
import XCTest

/// Review of commit 7bc9d31's input checks: every score or quality that a caller or data can set reaches the
/// search, the predictor and the encoders inside its documented range, and equal values stay equal and hash alike.
final class Review19QualityTargetTests: XCTestCase {
    /// `QualityTarget.minimumScore` is documented "0…100 (clamped)", but it is a public `var`: only the initializer
    /// clamped, so an assignment kept NaN (a target unequal to itself, whose `parameter` "auto:nan" does not read
    /// back) or −∞ (which reached `QualitySearch` and trapped in `Int(_:)`, see `testMinusInfiniteTargetEncodes`).
    func testMinimumScoreIsClampedWhenSet() {
        var target = QualityTarget.medium
        target.minimumScore = 150
        XCTAssertEqual(target.minimumScore, 100)
        target.minimumScore = -.infinity
        XCTAssertEqual(target.minimumScore, 0)
        target.minimumScore = .nan
        XCTAssertEqual(target.minimumScore, QualityTarget(minimumScore: .nan).minimumScore, "NaN is what init makes of it")
        XCTAssertEqual(target, target, "a target equals itself")
        XCTAssertEqual(QualityTarget(parameter: target.parameter), target, "its parameter reads back")
        target.minimumScore = 74.5
        XCTAssertEqual(target, QualityTarget(minimumScore: 74.5))
        XCTAssertEqual(Set([target, QualityTarget(minimumScore: 74.5)]).count, 1)
    }

    /// A target set to −∞ through the property, encoded for every built-in lossy format: an image, not a trap.
    func testMinusInfiniteTargetEncodes() throws {
        let buffer = try Patterns.make(width: 48, height: 40) { x, y in RGBA(r: UInt8(x * 5), g: UInt8(y * 6), b: 90) }
        for score in [-Double.infinity, -1e300, .nan, .infinity] {
            var target = QualityTarget.medium
            target.minimumScore = score
            for format in [ImageFormat.jpeg, .webp] {
                var encoder = ImageEncoder(format: format, options: EncodeOptions(automaticQuality: target))
                encoder.addFrame(buffer)
                let decoded = try ImageDecoder.decode(try encoder.encode())
                XCTAssertEqual(decoded.firstFrame.buffer.width, 48, "\(format) at \(score)")
            }
        }
    }

    /// `EncodeOptions` compares and hashes on the clamped quality: NaN is the default, −0 is 0, 2 is 1.
    func testEncodeOptionsEqualityFollowsTheClampedQuality() {
        let pairs: [(Double, Double)] = [(.nan, EncodeOptions.defaultQuality), (-0.0, 0), (2, 1), (-.infinity, 0), (.infinity, 1)]
        for (a, b) in pairs {
            let (x, y) = (EncodeOptions(quality: a), EncodeOptions(quality: b))
            XCTAssertEqual(x, y, "\(a) vs \(b)")
            XCTAssertEqual(x.hashValue, y.hashValue, "\(a) vs \(b)")
            XCTAssertEqual(Set([x, y]).count, 1)
        }
        XCTAssertNotEqual(EncodeOptions(quality: 0.5), EncodeOptions(quality: 0.51))
    }

    /// The predictor carried onto AVIF's and JPEG XL's curves: features far outside what an image gives (the
    /// benchmark's SPI can set any) or NaN/infinite never make a quality outside 1…101, and never trap. The check
    /// for a finite prediction came before the carry, whose slope ratio (JPEG XL's 1.8 qualities a point against
    /// WebP's 0.5 at score 55) can overflow a finite one to −∞.
    func testPredictionStaysInRangeForAnyFeatures() throws {
        let base = QualityFeatures(try Patterns.make(width: 32, height: 32) { x, y in RGBA(r: UInt8(x * 8), g: UInt8(y * 8), b: 60) })
        let values: [Double] = [.nan, .infinity, -.infinity, 3e306, -3e306, 1e300, -1e300, 0, 1]
        var cases = 0
        for format in [ImageFormat.jpeg, .webp, .avif, .jpegXL] {
            for target in [0.0, 30, 55, 70, 100] {
                for value in values {
                    for field in 0..<5 {
                        var features = base
                        switch field {
                        case 0: features.lumaGradient = value
                        case 1: features.chromaGradient = value
                        case 2: features.flatFraction = value
                        case 3: features.edgeFraction = value
                        default: features.chromaLoss = value
                        }
                        for check in [QualityTarget.Check.scored, .predicted] {
                            let q = QualityModel.quality(for: target, features: features, format: format, subsampling: .yuv420, check: check)
                            XCTAssertTrue((1...101).contains(q), "\(format) \(target) field \(field) = \(value): \(q)")
                            cases += 1
                        }
                    }
                }
            }
        }
        XCTAssertEqual(cases, 4 * 5 * values.count * 5 * 2)
    }
}
