import ImageCodec
import XCTest

final class ProcessingGeometryTests: XCTestCase {
    // The asymmetric 3×2 pattern, one letter per pixel:
    //   A B C
    //   D E F
    private let letters: [Character: RGBA] = [
        "A": RGBA(r: 1, g: 0, b: 0), "B": RGBA(r: 2, g: 0, b: 0), "C": RGBA(r: 3, g: 0, b: 0),
        "D": RGBA(r: 4, g: 0, b: 0), "E": RGBA(r: 5, g: 0, b: 0), "F": RGBA(r: 6, g: 0, b: 0),
    ]

    /// A buffer from rows of letters, e.g. `["AB", "CD"]`.
    private func pattern(_ rows: [String]) throws -> PixelBuffer {
        let grid = rows.map(Array.init)
        return try Patterns.make(width: grid[0].count, height: grid.count) { x, y in self.letters[grid[y][x]]! }
    }

    private var source: PixelBuffer { get throws { try pattern(["ABC", "DEF"]) } }

    func testRotationsMatchHandComputedPixels() throws {
        XCTAssertEqual(try source.rotated(by: .clockwise90), try pattern(["DA", "EB", "FC"]))
        XCTAssertEqual(try source.rotated(by: .clockwise180), try pattern(["FED", "CBA"]))
        XCTAssertEqual(try source.rotated(by: .clockwise270), try pattern(["CF", "BE", "AD"]))
    }

    func testFlipsMatchHandComputedPixelsAndTwiceIsIdentity() throws {
        XCTAssertEqual(try source.flippedHorizontally(), try pattern(["CBA", "FED"]))
        XCTAssertEqual(try source.flippedVertically(), try pattern(["DEF", "ABC"]))
        let big = try Patterns.indexed(width: 37, height: 23)
        XCTAssertEqual(try big.flippedHorizontally().flippedHorizontally(), big)
        XCTAssertEqual(try big.flippedVertically().flippedVertically(), big)
    }

    func testFourQuarterTurnsAreIdentityOnALargeTiledImage() throws {
        let big = try Patterns.indexed(width: 150, height: 70) // crosses the 64-pixel tiles
        var turned = big
        for _ in 0..<4 { turned = try turned.rotated(by: .clockwise90) }
        XCTAssertEqual(turned, big)
        XCTAssertEqual(try big.rotated(by: .clockwise90).rotated(by: .clockwise270), big)
        XCTAssertEqual(try big.rotated(by: .clockwise180).rotated(by: .clockwise180), big)
        let r = try big.rotated(by: .clockwise90)
        XCTAssertEqual(r.width, 70)
        XCTAssertEqual(r.height, 150)
        XCTAssertEqual(r.pixel(x: 69, y: 0), big.pixel(x: 0, y: 0)) // top-left goes to top-right
    }

    /// EXIF: where the stored 0th row and 0th column are shown. Each expectation is read off that table.
    func testEachEXIFOrientationMatchesHandComputedPixels() throws {
        let expected: [ImageOrientation: [String]] = [
            .up: ["ABC", "DEF"],
            .upMirrored: ["CBA", "FED"],        // row 0 at top, column 0 at right
            .down: ["FED", "CBA"],              // row 0 at bottom, column 0 at right
            .downMirrored: ["DEF", "ABC"],      // row 0 at bottom, column 0 at left
            .leftMirrored: ["AD", "BE", "CF"],  // row 0 at left, column 0 at top
            .right: ["DA", "EB", "FC"],         // row 0 at right, column 0 at top (rotate 90° clockwise)
            .rightMirrored: ["FC", "EB", "DA"], // row 0 at right, column 0 at bottom
            .left: ["CF", "BE", "AD"],          // row 0 at left, column 0 at bottom (rotate 90° counter-clockwise)
        ]
        for orientation in ImageOrientation.allCases {
            let upright = try source.applyingOrientation(orientation)
            XCTAssertEqual(upright, try pattern(expected[orientation]!), "orientation \(orientation.rawValue)")
            XCTAssertEqual(upright.width == 2, orientation.swapsDimensions)
        }
    }

    /// A camera stores the upright scene transformed by the inverse of the orientation it records; applying
    /// the orientation must give the scene back.
    func testApplyingOrientationUndoesTheCameraTransform() throws {
        let scene = try Patterns.indexed(width: 70, height: 45)
        let stored: [ImageOrientation: PixelBuffer] = [
            .up: scene,
            .upMirrored: try scene.flippedHorizontally(),
            .down: try scene.rotated(by: .clockwise180),
            .downMirrored: try scene.flippedVertically(),
            .leftMirrored: try scene.rotated(by: .clockwise90).flippedHorizontally(), // a transpose
            .right: try scene.rotated(by: .clockwise270),   // sensor turned: scene stored 90° counter-clockwise
            .rightMirrored: try scene.rotated(by: .clockwise270).flippedHorizontally(),
            .left: try scene.rotated(by: .clockwise90),
        ]
        for orientation in ImageOrientation.allCases {
            XCTAssertEqual(try stored[orientation]!.applyingOrientation(orientation), scene, "orientation \(orientation.rawValue)")
        }
    }

    func testGeometryKeepsPixelFormatAndIgnoresRowPadding() throws {
        var padded = try PixelBuffer(width: 3, height: 2, pixelFormat: .rgba8, bytesPerRow: 20)
        for (i, c) in "ABCDEF".enumerated() { padded.setPixel(x: i % 3, y: i / 3, to: letters[c]!) }
        let r = try padded.rotated(by: .clockwise90)
        XCTAssertEqual(r.pixelFormat, .rgba8)
        XCTAssertEqual(r.converted(to: .rgba8Premultiplied), try pattern(["DA", "EB", "FC"]))
        XCTAssertEqual(try padded.cropped(x: 1, y: 1, width: 2, height: 1).pixel(x: 1, y: 0), letters["F"])
    }

    func testCropCopiesExactPixelsAndClampsToTheImage() throws {
        let image = try Patterns.indexed(width: 10, height: 8)
        let crop = try image.cropped(x: 2, y: 3, width: 4, height: 2)
        XCTAssertEqual(crop.width, 4)
        XCTAssertEqual(crop.height, 2)
        for y in 0..<2 { for x in 0..<4 { XCTAssertEqual(crop.pixel(x: x, y: y), image.pixel(x: x + 2, y: y + 3)) } }

        let clamped = try image.cropped(x: -5, y: 6, width: 8, height: 100)
        XCTAssertEqual(clamped.width, 3)
        XCTAssertEqual(clamped.height, 2)
        XCTAssertEqual(clamped.pixel(x: 0, y: 0), image.pixel(x: 0, y: 6))

        let huge = try image.cropped(x: 9, y: 7, width: Int.max, height: Int.max)
        XCTAssertEqual(huge.width, 1)
        XCTAssertEqual(huge.pixel(x: 0, y: 0), image.pixel(x: 9, y: 7))
        XCTAssertEqual(try image.cropped(x: 0, y: 0, width: 10, height: 8), image)
    }

    func testEmptyOrOutsideCropRectanglesThrow() throws {
        let image = try Patterns.indexed(width: 10, height: 8)
        let rects: [(Int, Int, Int, Int)] = [(0, 0, 0, 5), (0, 0, 5, -1), (10, 0, 5, 5), (0, 8, 5, 5),
                                             (-5, 0, 5, 5), (Int.min, Int.min, Int.max, Int.max), (Int.max, 0, Int.max, 1)]
        for (x, y, w, h) in rects {
            XCTAssertThrowsError(try image.cropped(x: x, y: y, width: w, height: h)) { error in
                XCTAssertEqual(error as? ImageProcessingError,
                               .emptyCropRect(x: x, y: y, width: w, height: h, imageWidth: 10, imageHeight: 8))
            }
        }
    }
}
