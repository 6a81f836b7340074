import ImageCodec
import XCTest

/// `PixelBuffer.cropWindow`: anchors and focal points exactly, the attention and entropy strategies on synthetic
/// images whose answer is known, and bounds (windows at, past and under the image's size).
final class CropWindowTests: XCTestCase {
    /// A flat image with optional painted rectangles (straight RGBA).
    static func image(width: Int, height: Int, background: RGBA = RGBA(r: 128, g: 128, b: 128, a: 255),
                      paint: [(x: Int, y: Int, w: Int, h: Int, colour: (Int, Int) -> RGBA)] = []) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var c = background
                for p in paint where x >= p.x && x < p.x + p.w && y >= p.y && y < p.y + p.h { c = p.colour(x, y) }
                let o = (y * width + x) * 4
                (bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]) = (c.r, c.g, c.b, c.a)
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    func testAnchorsPlaceTheWindowAtTheirFractionOfTheSlack() throws {
        let wide = try Self.image(width: 101, height: 50)
        // Slack 61 across, 0 down.
        XCTAssertEqual(wide.cropWindow(width: 40, height: 50, strategy: .fractions(x: 0, y: 0.5)).x, 0)
        XCTAssertEqual(wide.cropWindow(width: 40, height: 50, strategy: .fractions(x: 1, y: 0.5)).x, 61)
        // An odd slack's centre is the one the centred crop always took: (101 - 40) / 2 = 30.
        XCTAssertEqual(wide.cropWindow(width: 40, height: 50, strategy: .fractions(x: 0.5, y: 0.5)).x, 30)
        let tall = try Self.image(width: 30, height: 90)
        XCTAssertEqual(tall.cropWindow(width: 30, height: 30, strategy: .fractions(x: 0.5, y: 0)).y, 0)
        XCTAssertEqual(tall.cropWindow(width: 30, height: 30, strategy: .fractions(x: 0.5, y: 1)).y, 60)
        let square = try Self.image(width: 100, height: 100)
        let corner = square.cropWindow(width: 10, height: 20, strategy: .fractions(x: 1, y: 1))
        XCTAssertEqual(corner.x, 90)
        XCTAssertEqual(corner.y, 80)
        let opposite = square.cropWindow(width: 10, height: 20, strategy: .fractions(x: 0, y: 0))
        XCTAssertEqual(opposite.x, 0)
        XCTAssertEqual(opposite.y, 0)
        // Out-of-range fractions are clamped; NaN is the centre.
        XCTAssertEqual(square.cropWindow(width: 10, height: 20, strategy: .fractions(x: -3, y: 7)).x, 0)
        XCTAssertEqual(square.cropWindow(width: 10, height: 20, strategy: .fractions(x: -3, y: 7)).y, 80)
        XCTAssertEqual(square.cropWindow(width: 10, height: 20, strategy: .fractions(x: .nan, y: .infinity)).x, 45)
    }

    func testFocalPointIsCentredUntilTheWindowMeetsAnEdge() throws {
        let image = try Self.image(width: 200, height: 100)
        // Centre at 0.3 × 200 = 60: origin 60 − 25 = 35.
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 0.3, y: 0.5)).x, 35)
        // Exactly at the edge: 0.125 × 200 = 25 → origin 0; one pixel further is clamped to 0 too.
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 0.125, y: 0.5)).x, 0)
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 0.12, y: 0.5)).x, 0)
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 0.13, y: 0.5)).x, 1)
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 0.95, y: 0.5)).x, 150)
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: 1, y: 0)).x, 150)
        // Both axes.
        let both = image.cropWindow(width: 20, height: 10, strategy: .focalPoint(x: 0.5, y: 0.8))
        XCTAssertEqual(both.x, 90)
        XCTAssertEqual(both.y, 75)
        XCTAssertEqual(image.cropWindow(width: 50, height: 100, strategy: .focalPoint(x: -.infinity, y: .nan)).x, 0)
    }

    func testWindowsAtPastAndUnderTheImageSizeNeverTrap() throws {
        let image = try Self.image(width: 7, height: 3)
        for strategy: CropWindowStrategy in [.attention, .entropy, .focalPoint(x: 0.9, y: 0.9), .fractions(x: 1, y: 1)] {
            let whole = image.cropWindow(width: 7, height: 3, strategy: strategy)
            XCTAssertEqual(whole.x, 0)
            XCTAssertEqual(whole.y, 0)
            let past = image.cropWindow(width: 8, height: Int.max, strategy: strategy)
            XCTAssertEqual(past.x, 0)
            XCTAssertEqual(past.y, 0)
            let empty = image.cropWindow(width: 0, height: -5, strategy: strategy)
            XCTAssertTrue((0...6).contains(empty.x) && (0...2).contains(empty.y), "\(strategy): \(empty)")
            let one = image.cropWindow(width: 6, height: 3, strategy: strategy)
            XCTAssertTrue((0...1).contains(one.x) && one.y == 0, "\(strategy): \(one)")
        }
        let line = try Self.image(width: 1, height: 5000)
        let origin = line.cropWindow(width: 1, height: 10, strategy: .attention)
        XCTAssertTrue((0...4990).contains(origin.y))
    }

    func testFlatImagesKeepTheCentre() throws {
        let flat = try Self.image(width: 300, height: 200)
        for strategy: CropWindowStrategy in [.attention, .entropy] {
            let origin = flat.cropWindow(width: 100, height: 200, strategy: strategy)
            XCTAssertEqual(Double(origin.x), 100, accuracy: 4, "\(strategy)")
            let tall = flat.cropWindow(width: 300, height: 60, strategy: strategy)
            XCTAssertEqual(Double(tall.y), 70, accuracy: 4, "\(strategy)")
        }
    }

    func testAttentionFindsASaturatedObjectOnAFlatBackground() throws {
        // A red square (skin-like hue, saturated, with edges) on grey, in each third of a 3:2 image.
        for objectX in [20, 140, 250] {
            let image = try Self.image(width: 300, height: 200, paint: [(x: objectX, y: 80, w: 30, h: 30,
                                                                        colour: { _, _ in RGBA(r: 220, g: 60, b: 40, a: 255) })])
            let origin = image.cropWindow(width: 100, height: 200, strategy: .attention)
            XCTAssertLessThanOrEqual(origin.x, objectX, "object at \(objectX)")
            XCTAssertGreaterThanOrEqual(origin.x + 100, objectX + 30, "object at \(objectX)")
            // Not merely inside: near the window's centre as the image allows.
            let ideal = min(max(objectX + 15 - 50, 0), 200)
            XCTAssertEqual(Double(origin.x), Double(ideal), accuracy: 20, "object at \(objectX)")
        }
        // Vertically, on a 2:3 image.
        let tall = try Self.image(width: 200, height: 300, paint: [(x: 90, y: 230, w: 20, h: 20,
                                                                    colour: { _, _ in RGBA(r: 30, g: 200, b: 60, a: 255) })])
        let origin = tall.cropWindow(width: 200, height: 100, strategy: .attention)
        XCTAssertTrue(origin.y <= 230 && origin.y + 100 >= 250, "\(origin)")
    }

    func testAttentionOnAPremultipliedCutOut() throws {
        // A transparent canvas with one opaque object: premultiplied, the background is black, the object stands out.
        let straight = try Self.image(width: 300, height: 200, background: RGBA(r: 0, g: 0, b: 0, a: 0),
                                      paint: [(x: 230, y: 90, w: 30, h: 30, colour: { _, _ in RGBA(r: 240, g: 200, b: 50, a: 255) })])
        let origin = straight.converted(to: .rgba8Premultiplied).cropWindow(width: 100, height: 200, strategy: .attention)
        XCTAssertTrue(origin.x <= 230 && origin.x + 100 >= 260, "\(origin)")
    }

    func testEntropyKeepsTheDetailedPart() throws {
        // Noise (high entropy) in one part of a flat image.
        var state: UInt64 = 0x9E3779B97F4A7C15
        func noise(_: Int, _: Int) -> RGBA {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let v = UInt8(truncatingIfNeeded: state >> 56)
            return RGBA(r: v, g: v, b: v, a: 255)
        }
        for noiseX in [0, 200] {
            let image = try Self.image(width: 300, height: 200, paint: [(x: noiseX, y: 0, w: 100, h: 200, colour: noise)])
            let origin = image.cropWindow(width: 100, height: 200, strategy: .entropy)
            XCTAssertEqual(Double(origin.x), Double(noiseX), accuracy: 10)
        }
    }
}
