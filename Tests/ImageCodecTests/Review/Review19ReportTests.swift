@testable import ImageCodec
import TestSupport
import XCTest

/// Review of commit 7bc9d31's `AutomaticQuality.Report` on grids finer than whole qualities: `quality` is documented
/// as the written quality rounded to 1…100, `encodedQuality` as the exact one, `tries` as levels of the grid.
final class Review19ReportTests: XCTestCase {
    /// A target every level passes (the closure writes a fixed q90 whatever it is asked: the search sees a flat,
    /// passing curve) walks JPEG XL's grid down to level 1, quality 0.0025: `quality` rounded that to 0, outside
    /// its documented 1…100 (a consumer dividing bytes by it, or mapping it back to a level, met a quality that
    /// no encoder offers).
    func testReportedQualityStaysInOneToHundredOnAQuarterGrid() throws {
        let image = try Patterns.make(width: 48, height: 40) { x, y in RGBA(r: UInt8(x * 5), g: UInt8(y * 6), b: 90) }
        let grid = AutomaticQuality.Grid.of(.jpegXL)
        for format in [ImageFormat.jpeg, .webp] {
            var asked: [Double] = []
            let report = try AutomaticQuality.encode(image, format: format, target: QualityTarget(minimumScore: 0),
                                                     options: EncodeOptions(), grid: grid) { buffer, options in
                asked.append(options.quality)
                var fixed = options
                fixed.quality = 0.9
                return try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: buffer)], format: format, loopCount: 0, options: fixed)
            }
            XCTAssertFalse(report.usedFallback, "\(format)")
            let winner = try XCTUnwrap(report.tries.filter { $0.score >= 0 }.map(\.level).min(), "\(format)")
            XCTAssertEqual(winner, 1, "\(format): every level passes, so the search ends at level 1: \(report.tries)")
            XCTAssertEqual(report.encodedQuality, grid.quality(winner), "\(format)")
            XCTAssertTrue(asked.contains(report.encodedQuality), "\(format): the exact quality is one that was encoded")
            XCTAssertTrue((1...100).contains(report.quality), "\(format): reported quality \(report.quality)")
            XCTAssertTrue(report.tries.allSatisfy { (1...grid.levels).contains($0.level) }, "\(format): tries are levels")
        }
    }
}
