import ImageCodec
import XCTest

/// Brightness, contrast, rgb, grayscale and the mean colour: thumbor's integer maths, alpha kept, both pixel formats.
final class ProcessingAdjustTests: XCTestCase {
    func testBrightnessAddsAPercentOf255Clamped() throws {
        let image = try Patterns.make(width: 3, height: 1, format: .rgba8) { x, _ in
            [RGBA(r: 0, g: 100, b: 250), RGBA(r: 128, g: 128, b: 128, a: 0), RGBA(r: 10, g: 20, b: 30, a: 128)][x]
        }
        let brighter = image.adjustingBrightness(percent: 10) // +25 (255 * 10 / 100, truncated)
        XCTAssertEqual(brighter.pixel(x: 0, y: 0), RGBA(r: 25, g: 125, b: 255))
        XCTAssertEqual(brighter.pixel(x: 2, y: 0), RGBA(r: 35, g: 45, b: 55, a: 128), "alpha kept")
        XCTAssertEqual(image.adjustingBrightness(percent: -100).pixel(x: 0, y: 0), RGBA(r: 0, g: 0, b: 0))
        XCTAssertEqual(image.adjustingBrightness(percent: 0), image)
        // Premultiplied in, premultiplied out, the colour adjusted straight.
        let premultiplied = image.converted(to: .rgba8Premultiplied).adjustingBrightness(percent: 10)
        XCTAssertEqual(premultiplied.pixelFormat, .rgba8Premultiplied)
        XCTAssertEqual(premultiplied.converted(to: .rgba8).pixel(x: 0, y: 0), RGBA(r: 25, g: 125, b: 255))
        // Hostile percentages clamp, never overflow.
        XCTAssertEqual(image.adjustingBrightness(percent: .max).pixel(x: 0, y: 0), RGBA(r: 255, g: 255, b: 255))
    }

    func testContrastScalesTheDistanceFromMidGrey() throws {
        let image = try Patterns.make(width: 2, height: 1, format: .rgba8) { x, _ in
            x == 0 ? RGBA(r: 100, g: 128, b: 200) : RGBA(r: 0, g: 255, b: 129)
        }
        // 50: factor (150² / 100) = 225 → (225 · (v − 128)) / 100 + 128, truncated toward zero.
        XCTAssertEqual(image.adjustingContrast(percent: 50).pixel(x: 0, y: 0), RGBA(r: 65, g: 128, b: 255))
        XCTAssertEqual(image.adjustingContrast(percent: -100).pixel(x: 1, y: 0), RGBA(r: 128, g: 128, b: 128))
        XCTAssertEqual(image.adjustingContrast(percent: 0), image)
    }

    func testRGBAddsPerChannel() throws {
        let image = try Patterns.make(width: 1, height: 1, format: .rgba8) { _, _ in RGBA(r: 100, g: 100, b: 100) }
        XCTAssertEqual(image.addingRGB(red: 20, green: -20, blue: 0).pixel(x: 0, y: 0), RGBA(r: 151, g: 49, b: 100))
    }

    func testGrayscaleIsPILsLuma() throws {
        let image = try Patterns.make(width: 3, height: 1, format: .rgba8) { x, _ in
            [RGBA(r: 255, g: 0, b: 0), RGBA(r: 0, g: 255, b: 0), RGBA(r: 0, g: 0, b: 255, a: 40)][x]
        }
        let grey = image.grayscaled()
        // PIL: L = R·299/1000 + G·587/1000 + B·114/1000, rounded: 76, 150, 29.
        XCTAssertEqual(grey.pixel(x: 0, y: 0), RGBA(r: 76, g: 76, b: 76))
        XCTAssertEqual(grey.pixel(x: 1, y: 0), RGBA(r: 150, g: 150, b: 150))
        XCTAssertEqual(grey.pixel(x: 2, y: 0), RGBA(r: 29, g: 29, b: 29, a: 40))
    }

    func testMeanColorAveragesStraightColour() throws {
        let image = try Patterns.make(width: 2, height: 2, format: .rgba8) { x, y in
            x == 0 ? RGBA(r: 0, g: 10, b: 255) : RGBA(r: 255, g: 11, b: 0, a: y == 0 ? 255 : 128)
        }
        XCTAssertEqual(image.meanColor(), RGBA(r: 127, g: 10, b: 127))
        XCTAssertEqual(image.converted(to: .rgba8Premultiplied).meanColor().g, 10)
    }
}
