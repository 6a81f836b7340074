import ImageCodec
import XCTest

/// Solid images, drawing one image on another (blended or copied), compositing over a colour, round corners and
/// sharpening.
final class ProcessingCompositeTests: XCTestCase {
    func testSolidAndDrawingBlendsByAlpha() throws {
        let red = try PixelBuffer.solid(width: 4, height: 4, color: RGBA(r: 255, g: 0, b: 0))
        XCTAssertEqual(red.pixel(x: 3, y: 3), RGBA(r: 255, g: 0, b: 0))
        let halfBlue = try PixelBuffer.solid(width: 2, height: 2, color: RGBA(r: 0, g: 0, b: 255, a: 128))
        let drawn = red.drawing(halfBlue, x: 1, y: 1)
        XCTAssertEqual(drawn.pixel(x: 0, y: 0), RGBA(r: 255, g: 0, b: 0), "outside the drawn image: unchanged")
        let mixed = drawn.pixel(x: 1, y: 1)
        XCTAssertEqual(Int(mixed.r), 127, accuracy: 1)
        XCTAssertEqual(Int(mixed.b), 128, accuracy: 1)
        XCTAssertEqual(mixed.a, 255)
        // Copied, not blended: the transparent pixels are copied too (PIL's paste without a mask).
        let copied = red.drawing(halfBlue, x: 1, y: 1, blendsAlpha: false)
        XCTAssertEqual(copied.pixel(x: 2, y: 2), RGBA(r: 0, g: 0, b: 255, a: 128))
        // Cut at the edges, wherever it is drawn (and far outside: unchanged, no overflow).
        XCTAssertEqual(red.drawing(halfBlue, x: 3, y: -1).pixel(x: 3, y: 0).b, 128)
        XCTAssertEqual(red.drawing(halfBlue, x: .max, y: .min), red)
        // Opacity scales the drawn image's alpha.
        XCTAssertEqual(red.drawing(try PixelBuffer.solid(width: 4, height: 4, color: RGBA(r: 0, g: 0, b: 255)), x: 0, y: 0,
                                   opacity: 0).pixel(x: 0, y: 0), RGBA(r: 255, g: 0, b: 0))
    }

    func testCompositedOverAColourIsOpaque() throws {
        let image = try Patterns.make(width: 2, height: 1, format: .rgba8Premultiplied) { x, _ in
            x == 0 ? RGBA(r: 0, g: 0, b: 0, a: 0) : RGBA(r: 100, g: 100, b: 100)
        }
        let out = try image.composited(over: RGBA(r: 0, g: 255, b: 0))
        XCTAssertEqual(out.pixelFormat, .rgba8Premultiplied)
        XCTAssertEqual(out.pixel(x: 0, y: 0), RGBA(r: 0, g: 255, b: 0))
        XCTAssertEqual(out.pixel(x: 1, y: 0), RGBA(r: 100, g: 100, b: 100))
        XCTAssertTrue(out.isOpaque)
    }

    func testRoundCornersPaintOutsideTheEllipseOnly() throws {
        let image = try PixelBuffer.solid(width: 40, height: 30, color: RGBA(r: 10, g: 20, b: 30))
        let white = RGBA(r: 255, g: 255, b: 255)
        let round = image.roundingCorners(a: 10, b: 10, color: white, transparent: false)
        for (x, y) in [(0, 0), (39, 0), (0, 29), (39, 29), (1, 1)] {
            XCTAssertEqual(round.pixel(x: x, y: y), white, "corner (\(x), \(y))")
        }
        for (x, y) in [(20, 15), (15, 0), (0, 15), (39, 15), (20, 29), (8, 8)] {
            XCTAssertEqual(round.pixel(x: x, y: y), RGBA(r: 10, g: 20, b: 30), "inside (\(x), \(y))")
        }
        // Transparent corners; radii past half the size are clamped; 0 changes nothing.
        let clear = image.roundingCorners(a: 1000, b: 1000, color: white, transparent: true)
        XCTAssertEqual(clear.pixel(x: 0, y: 0).a, 0)
        XCTAssertEqual(clear.pixel(x: 20, y: 15).a, 255)
        XCTAssertEqual(image.roundingCorners(a: 0, b: 5, color: white, transparent: false), image)
        let tiny = try PixelBuffer.solid(width: 1, height: 1, color: white)
        XCTAssertEqual(tiny.roundingCorners(a: 5, b: 5, color: RGBA(r: 0, g: 0, b: 0), transparent: false), tiny)
    }

    func testSharpenRaisesEdgeContrastAndLeavesFlatAreas() throws {
        let edge = try Patterns.make(width: 20, height: 4, format: .rgba8) { x, _ in
            x < 10 ? RGBA(r: 100, g: 100, b: 100) : RGBA(r: 150, g: 150, b: 150)
        }
        for luminanceOnly in [false, true] {
            let sharp = try edge.sharpened(amount: 1, radius: 1, luminanceOnly: luminanceOnly)
            XCTAssertLessThan(sharp.pixel(x: 9, y: 2).r, 100, "dark side of the edge darker")
            XCTAssertGreaterThan(sharp.pixel(x: 10, y: 2).r, 150, "light side lighter")
            XCTAssertEqual(sharp.pixel(x: 0, y: 0).r, 100, "flat far from the edge")
        }
        XCTAssertEqual(try edge.sharpened(amount: 0, radius: 1), edge)
        XCTAssertThrowsError(try edge.sharpened(amount: 1, radius: .nan))
    }
}
