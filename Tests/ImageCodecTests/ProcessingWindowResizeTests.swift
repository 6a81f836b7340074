import ImageCodec
import XCTest

/// `PixelBuffer.resized(width:height:fromX:y:sourceWidth:sourceHeight:)`: a crop and a resize in one resample.
final class ProcessingWindowResizeTests: XCTestCase {
    /// A horizontal ramp: r = 2x, so a pixel's value names its position.
    private func ramp(width: Int = 120, height: Int = 40) throws -> PixelBuffer {
        try Patterns.make(width: width, height: height) { x, y in RGBA(r: UInt8(2 * x), g: UInt8(3 * y), b: 90) }
    }

    func testAWindowOnWholePixelsIsACropThenAResize() throws {
        let source = try ramp()
        for filter in ResamplingFilter.allCases {
            for (x, y, w, h, ow, oh) in [(10, 5, 60, 20, 30, 10), (0, 0, 120, 40, 17, 9), (33, 7, 50, 30, 50, 30), (5, 0, 100, 40, 7, 3)] {
                let windowed = try source.resized(width: ow, height: oh, fromX: Double(x), y: Double(y),
                                                  sourceWidth: Double(w), sourceHeight: Double(h), filter: filter)
                let expected = try source.cropped(x: x, y: y, width: w, height: h).resized(width: ow, height: oh, filter: filter)
                XCTAssertEqual(windowed, expected, "\(filter) \(x),\(y) \(w)×\(h) → \(ow)×\(oh)")
            }
        }
    }

    func testAFractionalWindowIsPlacedExactlyNotRounded() throws {
        // A window 40 wide from x = 10.5 at scale 1: each output pixel's centre is at 11 + i in the source, on the
        // boundary of two pixels, so a linear ramp gives the mean of the two: r = 2·(10 + i) + 1, which no whole-pixel
        // window (r = 2·(10 + i) or 2·(11 + i)) gives.
        let source = try ramp()
        let out = try source.resized(width: 40, height: 40, fromX: 10.5, y: 0, sourceWidth: 40, sourceHeight: 40, filter: .triangle)
        for i in 2..<38 {
            XCTAssertEqual(Int(out.pixel(x: i, y: 20).r), 2 * (10 + i) + 1, "x = \(i)")
        }
    }

    func testAWindowOutsideTheImageIsAnErrorNotACrash() throws {
        let source = try ramp()
        for (x, y, w, h) in [(-1.0, 0.0, 10.0, 10.0), (0, 0, 121, 10), (0, 35, 10, 6), (0, 0, 0, 10), (.nan, 0, 10, 10),
                             (0, 0, .infinity, 10)] {
            XCTAssertThrowsError(try source.resized(width: 5, height: 5, fromX: x, y: y, sourceWidth: w, sourceHeight: h),
                                 "\(x),\(y) \(w)×\(h)")
        }
        // A window far narrower than a pixel reads the one pixel it lies in.
        let sliver = try source.resized(width: 3, height: 3, fromX: 50.25, y: 10.5, sourceWidth: 1e-12, sourceHeight: 1e-12)
        XCTAssertEqual(sliver.pixel(x: 1, y: 1), source.pixel(x: 50, y: 10))
        // Exactly at the edges is inside.
        XCTAssertNoThrow(try source.resized(width: 5, height: 5, fromX: 0, y: 0, sourceWidth: 120, sourceHeight: 40))
        XCTAssertNoThrow(try source.resized(width: 5, height: 5, fromX: 119.5, y: 39.5, sourceWidth: 0.5, sourceHeight: 0.5))
    }
}
