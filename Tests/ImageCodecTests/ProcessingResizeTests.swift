import ImageCodec
import XCTest

final class ProcessingResizeTests: XCTestCase {
    private let sizes = [(7, 5), (3, 9), (40, 30), (100, 61), (1, 1), (13, 1)]

    func testSolidColourStaysExactlySolidForEveryFilterAndSize() throws {
        let colour = RGBA(r: 200, g: 100, b: 30, a: 255)
        let translucent = RGBA(r: 60, g: 20, b: 10, a: 128)
        for c in [colour, translucent] {
            let source = try Patterns.solid(width: 23, height: 17, c)
            for filter in ResamplingFilter.allCases {
                for (w, h) in sizes {
                    let out = try source.resized(width: w, height: h, filter: filter)
                    XCTAssertEqual(out.width, w)
                    XCTAssertEqual(out.height, h)
                    let expected = try Patterns.solid(width: w, height: h, c)
                    XCTAssertEqual(out, expected, "\(filter) → \(w)×\(h)")
                }
            }
        }
    }

    func testCheckerboardHalvedIsUniformGrey() throws {
        let source = try Patterns.checkerboard(width: 64, height: 48)
        for filter in ResamplingFilter.allCases {
            let out = try source.resized(width: 32, height: 24, filter: filter)
            // Away from the borders every symmetric filter weighs each black/white pair equally: 127.5 → 128.
            // Area averaging is exact up to the border; wider filters lose a few taps there (truncated and
            // renormalised windows), which leaves the border pixels within a few levels of grey.
            let margin = Int(filter == .area ? 0 : (filter == .lanczos3 ? 3 : 2))
            for y in 0..<out.height {
                for x in 0..<out.width {
                    let p = out.pixel(x: x, y: y)
                    XCTAssertEqual(p.a, 255)
                    XCTAssertTrue(p.r == p.g && p.g == p.b)
                    if x >= margin && y >= margin && x < out.width - margin && y < out.height - margin {
                        XCTAssertEqual(p.r, 128, "\(filter) (\(x), \(y))")
                    } else {
                        XCTAssertEqual(Double(p.r), 127.5, accuracy: 4, "\(filter) border (\(x), \(y))")
                    }
                }
            }
        }
    }

    func testCheckerboardShrunkByNonIntegerFactorsKeepsTheMeanWithoutMoire() throws {
        let source = try Patterns.checkerboard(width: 101, height: 97)
        let sourceMean = Patterns.mean(source, channel: 0)
        for filter in ResamplingFilter.allCases {
            for (w, h) in [(37, 41), (50, 33), (29, 29), (10, 7)] {
                let out = try source.resized(width: w, height: h, filter: filter)
                XCTAssertEqual(Patterns.mean(out, channel: 0), sourceMean, accuracy: 1.5, "\(filter) \(w)×\(h)")
                // Point sampling would give 0s and 255s; a low-pass filter keeps every pixel near grey.
                let bytes = out.packedBytes
                for i in stride(from: 0, to: bytes.count, by: 4) {
                    XCTAssertEqual(Double(bytes[i]), 127.5, accuracy: 32, "\(filter) \(w)×\(h) pixel \(i / 4)")
                }
            }
        }
    }

    func testHorizontalGradientStaysMonotonic() throws {
        let source = try Patterns.make(width: 256, height: 8) { x, _ in RGBA(r: UInt8(x), g: UInt8(x), b: UInt8(255 - x)) }
        for filter in ResamplingFilter.allCases {
            for width in [100, 37, 255, 400] {
                let out = try source.resized(width: width, height: 5, filter: filter)
                for y in 0..<out.height {
                    for x in 1..<out.width {
                        let (p, q) = (out.pixel(x: x - 1, y: y), out.pixel(x: x, y: y))
                        XCTAssertLessThanOrEqual(p.r, q.r, "\(filter) → \(width): x \(x)")
                        XCTAssertGreaterThanOrEqual(p.b, q.b, "\(filter) → \(width): x \(x)")
                    }
                }
                XCTAssertLessThan(out.pixel(x: 0, y: 0).r, 10)
                XCTAssertGreaterThan(out.pixel(x: out.width - 1, y: 0).r, 245)
            }
        }
    }

    func testTransparentPixelsDoNotBleedTheirColour() throws {
        // Straight alpha: the left half is invisible but stores bright red; the right half is opaque green.
        let straight = try Patterns.make(width: 20, height: 6, format: .rgba8) { x, _ in
            x < 10 ? RGBA(r: 255, g: 0, b: 0, a: 0) : RGBA(r: 0, g: 255, b: 0, a: 255)
        }
        for filter in ResamplingFilter.allCases {
            for (w, h) in [(7, 3), (40, 12)] {
                let out = try straight.resized(width: w, height: h, filter: filter)
                XCTAssertEqual(out.pixelFormat, .rgba8)
                for y in 0..<h {
                    for x in 0..<w {
                        let p = out.pixel(x: x, y: y)
                        XCTAssertEqual(p.r, 0, "\(filter) \(w)×\(h) (\(x), \(y)) \(p)")
                        if p.a > 16 { XCTAssertGreaterThanOrEqual(p.g, 250, "\(filter) (\(x), \(y)) \(p)") }
                    }
                }
            }
            let premultiplied = try straight.converted(to: .rgba8Premultiplied).resized(width: 13, height: 5, filter: filter)
            Patterns.assertValidPremultiplied(premultiplied)
            XCTAssertEqual(Patterns.mean(premultiplied, channel: 0), 0)
        }
    }

    func testRingingIsClampedAndPremultipliedStaysValid() throws {
        // Hard edges between black-transparent and white-opaque make Lanczos overshoot.
        let source = try Patterns.make(width: 30, height: 30) { x, y in
            (x / 3 + y / 5) % 2 == 0 ? RGBA(r: 0, g: 0, b: 0, a: 0) : RGBA(r: 255, g: 255, b: 255, a: 255)
        }
        for filter in ResamplingFilter.allCases {
            for (w, h) in [(11, 13), (70, 45)] {
                Patterns.assertValidPremultiplied(try source.resized(width: w, height: h, filter: filter))
            }
        }
    }

    func testEnlargingInterpolatesBetweenNeighbours() throws {
        let source = try Patterns.make(width: 2, height: 1) { x, _ in x == 0 ? RGBA(r: 0, g: 0, b: 0) : RGBA(r: 200, g: 200, b: 200) }
        let out = try source.resized(width: 8, height: 2, filter: .area)
        // Bilinear: the outer quarters copy the edge pixels, the middle ramps evenly.
        XCTAssertEqual((0..<8).map { out.pixel(x: $0, y: 1).r }, [0, 0, 25, 75, 125, 175, 200, 200])
        XCTAssertEqual(try source.resized(width: 8, height: 2, filter: .triangle), out)
    }

    func testSameSizeIsIdentityAndDimensionsAreExact() throws {
        let source = try Patterns.indexed(width: 9, height: 7)
        for filter in ResamplingFilter.allCases {
            XCTAssertEqual(try source.resized(width: 9, height: 7, filter: filter), source)
        }
        // Shrinking one axis only with an integer factor for the other: the kept axis is copied exactly.
        let halfHeight = try source.resized(width: 9, height: 1, filter: .area)
        XCTAssertEqual(halfHeight.pixel(x: 4, y: 0).r, 4)
    }

    func testMaxPixelSizeKeepsAspectRatioAndNeverEnlarges() throws {
        XCTAssertTrue(PixelBuffer.fittingSize(width: 4000, height: 3000, maxPixelSize: 400) == (400, 300))
        XCTAssertTrue(PixelBuffer.fittingSize(width: 3000, height: 4000, maxPixelSize: 400) == (300, 400))
        XCTAssertTrue(PixelBuffer.fittingSize(width: 10_000, height: 1, maxPixelSize: 100) == (100, 1))
        XCTAssertTrue(PixelBuffer.fittingSize(width: 50, height: 40, maxPixelSize: 400) == (50, 40))
        let source = try Patterns.indexed(width: 30, height: 20)
        let small = try source.resized(maxPixelSize: 15)
        XCTAssertEqual(small.width, 15)
        XCTAssertEqual(small.height, 10)
        XCTAssertEqual(try source.resized(maxPixelSize: 30), source)
        XCTAssertEqual(try source.resized(maxPixelSize: 1000), source)
    }

    func testInvalidAndHugeSizesThrowTypedErrors() throws {
        let source = try Patterns.indexed(width: 4, height: 4)
        let cases: [(Int, Int)] = [(0, 4), (4, -1), (Int.max, 2), (100_000, 100_000), (Int.min, Int.min)]
        for (w, h) in cases {
            XCTAssertThrowsError(try source.resized(width: w, height: h)) { error in
                XCTAssertEqual(error as? ImageProcessingError, .invalidSize(width: w, height: h))
            }
        }
        XCTAssertThrowsError(try source.resized(maxPixelSize: 0)) { error in
            XCTAssertEqual(error as? ImageProcessingError, .invalidMaxPixelSize(0))
        }
    }

    /// Shrinking by thousands: every source pixel still counts with its share (no weight rounds to nothing).
    func testExtremeShrinkStillAveragesEveryPixel() throws {
        var state: UInt32 = 99
        let source = try Patterns.make(width: 24_000, height: 2) { _, _ in
            state = state &* 1664525 &+ 1013904223
            let v = UInt8(truncatingIfNeeded: state >> 24)
            return RGBA(r: v, g: v / 2, b: 255 - v)
        }
        let bytes = source.packedBytes
        for filter in ResamplingFilter.allCases {
            let out = try source.resized(width: 3, height: 1, filter: filter)
            if filter == .area {
                // Exact area averaging: each output pixel is the mean of its 8000 × 2 pixels.
                for x in 0..<3 {
                    var sum = 0
                    for y in 0..<2 { for i in (x * 8000) ..< ((x + 1) * 8000) { sum += Int(bytes[(y * 24_000 + i) * 4]) } }
                    XCTAssertEqual(Double(out.pixel(x: x, y: 0).r), Double(sum) / 16_000, accuracy: 1, "pixel \(x)")
                }
            }
            XCTAssertEqual(Patterns.mean(out, channel: 0), Patterns.mean(source, channel: 0), accuracy: 2, "\(filter)")
            let single = try source.resized(width: 1, height: 1, filter: .area)
            XCTAssertEqual(Double(single.pixel(x: 0, y: 0).r), Patterns.mean(source, channel: 0), accuracy: 1)
        }
    }
}
