import Foundation
import ImageCodec
import XCTest

final class ProcessingBlurTests: XCTestCase {
    private func noise(width: Int, height: Int, seed: UInt64) throws -> PixelBuffer {
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        return try Patterns.make(width: width, height: height) { _, _ in
            let a = next()
            func upTo(_ v: UInt8) -> UInt8 { UInt8(Int(v) % (Int(a) + 1)) }
            return RGBA(r: upTo(next()), g: upTo(next()), b: upTo(next()), a: a)
        }
    }

    /// A black opaque square with one white pixel in the middle.
    private func impulse(size: Int) throws -> PixelBuffer {
        try Patterns.make(width: size, height: size) { x, y in
            x == size / 2 && y == size / 2 ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0)
        }
    }

    func testSolidImagesStaySolidForAnyRadius() throws {
        for colour in [RGBA(r: 200, g: 100, b: 30, a: 255), RGBA(r: 60, g: 20, b: 10, a: 128)] {
            let source = try Patterns.solid(width: 23, height: 11, colour)
            for radius in [0.8, 1, 2.5, 7, 30, 1000] {
                XCTAssertEqual(try source.blurred(radius: radius), source, "radius \(radius)")
            }
        }
    }

    func testBlurKeepsTheMeanOfEveryChannel() throws {
        let source = try noise(width: 53, height: 37, seed: 11)
        for radius in [1.0, 3, 10, 40, 500] {
            let out = try source.blurred(radius: radius)
            Patterns.assertValidPremultiplied(out)
            for c in 0..<4 {
                XCTAssertEqual(Patterns.mean(out, channel: c), Patterns.mean(source, channel: c), accuracy: 0.5,
                               "radius \(radius) channel \(c)")
            }
        }
    }

    func testZeroAndTinyRadiiAreIdentity() throws {
        let source = try noise(width: 9, height: 7, seed: 5)
        XCTAssertEqual(try source.blurred(radius: 0), source)
        XCTAssertEqual(try source.blurred(radius: 0.3), source)
        XCTAssertNotEqual(try source.blurred(radius: 1), source)
    }

    func testASinglePixelSpreadsSymmetrically() throws {
        let size = 61, c = 30
        for sigma in [1.5, 3] {
            let out = try impulse(size: size).blurred(radius: sigma)
            var total = 0.0
            for y in 0..<size {
                for x in 0..<size {
                    let v = out.pixel(x: x, y: y).r
                    XCTAssertEqual(v, out.pixel(x: 2 * c - x, y: y).r, "σ \(sigma) mirror x at (\(x), \(y))")
                    XCTAssertEqual(v, out.pixel(x: x, y: 2 * c - y).r, "σ \(sigma) mirror y at (\(x), \(y))")
                    XCTAssertEqual(v, out.pixel(x: y, y: x).r, "σ \(sigma) transpose at (\(x), \(y))")
                    total += Double(v)
                }
            }
            // Monotonic fall-off from the centre along the row.
            for x in c..<(size - 1) { XCTAssertGreaterThanOrEqual(out.pixel(x: x, y: c).r, out.pixel(x: x + 1, y: c).r) }
            XCTAssertGreaterThan(out.pixel(x: c + 1, y: c).r, 0)
            XCTAssertEqual(total, 255, accuracy: 255 * 0.2, "σ \(sigma): energy kept (within rounding of small values)")
        }
    }

    /// A one-pixel white line spreads across it as a Gaussian whose standard deviation is the radius.
    func testRadiusIsTheStandardDeviation() throws {
        let size = 121, c = 60
        let line = try Patterns.make(width: size, height: 4) { x, _ in x == c ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0) }
        for sigma in [2.0, 4, 6, 10] {
            let out = try line.blurred(radius: sigma)
            var total = 0.0, second = 0.0
            for x in 0..<size {
                let v = Double(out.pixel(x: x, y: 1).r)
                total += v
                second += v * Double((x - c) * (x - c))
            }
            XCTAssertEqual(total, 255, accuracy: 255 * 0.05, "σ \(sigma)")
            XCTAssertEqual(sqrt(second / total), sigma, accuracy: sigma * 0.1, "σ \(sigma)")
        }
    }

    func testTransparentPixelsDoNotHalo() throws {
        let straight = try Patterns.make(width: 30, height: 10, format: .rgba8) { x, _ in
            x < 15 ? RGBA(r: 255, g: 0, b: 0, a: 0) : RGBA(r: 0, g: 255, b: 0, a: 255)
        }
        let out = try straight.blurred(radius: 4)
        XCTAssertEqual(out.pixelFormat, .rgba8)
        for y in 0..<10 {
            for x in 0..<30 {
                let p = out.pixel(x: x, y: y)
                XCTAssertEqual(p.r, 0, "(\(x), \(y)) \(p)")
                if p.a > 16 { XCTAssertGreaterThanOrEqual(p.g, 250, "(\(x), \(y)) \(p)") }
            }
        }
        XCTAssertLessThan(out.pixel(x: 13, y: 5).a, 128)
        XCTAssertGreaterThan(out.pixel(x: 13, y: 5).a, 0) // the edge softened
    }

    func testHugeRadiusFlattensAndInvalidRadiiThrow() throws {
        let source = try noise(width: 12, height: 9, seed: 2)
        let flat = try source.blurred(radius: 1e300)
        let mean = Patterns.mean(source, channel: 3)
        for y in 0..<9 { for x in 0..<12 { XCTAssertEqual(Double(flat.pixel(x: x, y: y).a), mean, accuracy: 2) } }
        for radius in [-1, Double.nan, Double.infinity, -Double.infinity] {
            XCTAssertThrowsError(try source.blurred(radius: radius)) { error in
                guard case .invalidRadius = error as? ImageProcessingError else { return XCTFail("\(error)") }
            }
        }
    }

    func testOneRowAndOneColumnImages() throws {
        let row = try Patterns.make(width: 40, height: 1) { x, _ in RGBA(r: x == 20 ? 255 : 0, g: 0, b: 0) }
        let out = try row.blurred(radius: 3)
        XCTAssertEqual(out.pixel(x: 18, y: 0).r, out.pixel(x: 22, y: 0).r)
        XCTAssertGreaterThan(out.pixel(x: 18, y: 0).r, 0)
        let column = try row.rotated(by: .clockwise90)
        XCTAssertEqual(try column.blurred(radius: 3), try out.rotated(by: .clockwise90))
    }

    func testProgressiveBlurScheduleFollowsYYWebImage() {
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 0, expectedBytes: 300, displayCount: 1), 32 * (1 / 0.6 - 0.25), accuracy: 1e-9)
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 100, expectedBytes: 300, displayCount: 1), 12, accuracy: 1e-9)
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 300, expectedBytes: 300, displayCount: 1), 32 * (1 / 3.6 - 0.25), accuracy: 1e-9)
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 900, expectedBytes: 300, displayCount: 1), 32 * (1 / 3.6 - 0.25), accuracy: 1e-9)
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 5, expectedBytes: nil, displayCount: 4), 8)
        XCTAssertEqual(ProgressiveBlur.radius(receivedBytes: 5, expectedBytes: -1, displayCount: 0), 32)
        var last = Double.infinity
        for received in stride(from: 0, through: 1000, by: 50) {
            let r = ProgressiveBlur.radius(receivedBytes: received, expectedBytes: 1000, displayCount: 1)
            XCTAssertLessThan(r, last)
            last = r
        }
    }

    /// Wide images are blurred in column strips; the strips must join seamlessly and both axes must agree.
    func testStripsJoinSeamlesslyAndAxesAgree() throws {
        let image = try noise(width: 150, height: 37, seed: 8)
        for radius in [2.0, 9, 150] { // 150: windows wider than 257 take the 64-bit path
            let out = try image.blurred(radius: radius)
            XCTAssertEqual(try image.flippedHorizontally().blurred(radius: radius), try out.flippedHorizontally(), "radius \(radius)")
            let viaTranspose = try image.applyingOrientation(.leftMirrored).blurred(radius: radius).applyingOrientation(.leftMirrored)
            let worst = zip(out.packedBytes, viaTranspose.packedBytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "radius \(radius)")
        }
    }
}
