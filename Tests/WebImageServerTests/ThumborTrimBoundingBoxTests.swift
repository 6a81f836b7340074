import ImageCodec
@testable import WebImageServerCore
import XCTest

/// `SourceTrim.boundingBox(of:)` against thumbor 7.8's own C (`thumbor.ext.filters._bounding_box`) on many small
/// generated images: the same seeded generator here and in scripts/thumbor-compat/trim_boxes.py, thumbor's boxes
/// recorded below. 1 × N, N × 1 and 1 × 1 images, both corners, tolerances 0, 1, 5 and 300, transparent pixels with
/// a colour, and thumbor's quirks (a far pixel only at a row's left edge does not move the right edge).
final class ThumborTrimBoundingBoxTests: XCTestCase {
    /// The generator of trim_boxes.py: a 64-bit LCG (Knuth's MMIX constants), its high 31 bits drawn.
    private struct Generator {
        var state: UInt64
        mutating func draw() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33)
        }
    }

    private static let palette: [RGBA] = [RGBA(r: 0, g: 0, b: 0), RGBA(r: 0, g: 0, b: 1), RGBA(r: 3, g: 4, b: 0),
                                          RGBA(r: 255, g: 255, b: 255), RGBA(r: 10, g: 10, b: 10, a: 0),
                                          RGBA(r: 250, g: 250, b: 250)]
    private static let tolerances = [0, 1, 5, 300]

    /// `trim_boxes.py 20261128 300`: thumbor's raw (left, top, right, bottom) per image.
    private static let seed: UInt64 = 20261128
    private static let recorded: String = [
        "0 0 4 2,0 0 4 2,7 1 0 0,1 1 4 5,0 0 0 0,0 0 3 4,1 2 0 2,2 0 0 0,1 4 0 0,0 1 2 5,1 0 4 1,0 0 6 3,4 1 0 0,0 0 6 4,1 1 0 0,4 1 0 0,",
        "1 0 5 3,0 2 6 3,1 0 0 0,3 4 0 4,0 1 2 6,5 1 0 0,6 1 0 0,0 0 5 2,2 3 3 4,0 1 0 1,0 0 3 1,0 0 4 3,2 3 0 0,0 0 4 1,2 1 0 1,0 0 0 3,",
        "0 0 3 6,0 0 0 5,0 0 1 4,0 0 6 3,0 0 5 3,1 3 0 3,2 0 5 0,0 0 6 1,2 0 0 0,0 0 2 2,0 1 0 5,0 1 6 5,1 0 4 0,0 0 6 6,0 0 6 2,0 0 6 2,",
        "0 0 6 3,0 0 5 1,3 1 0 1,4 0 0 0,0 0 5 3,1 1 0 4,2 1 0 0,0 0 0 1,0 0 0 0,0 0 0 0,0 0 0 4,1 0 0 0,0 0 2 5,1 4 0 0,0 0 6 5,0 0 5 0,",
        "1 4 0 0,0 2 0 3,0 2 2 5,0 0 1 1,1 4 0 4,1 2 0 0,0 0 1 1,2 1 0 0,0 0 2 1,0 1 1 3,1 5 0 0,0 0 4 2,4 0 0 0,0 0 6 3,1 0 0 0,0 0 3 6,",
        "6 1 0 0,0 1 0 1,1 2 0 0,0 1 6 4,0 0 0 5,0 0 3 1,0 0 2 2,0 0 4 6,4 3 0 0,1 0 3 0,0 1 1 5,1 0 6 1,0 1 0 1,0 0 1 3,0 0 0 1,0 0 4 1,",
        "1 2 0 2,0 0 0 5,1 0 0 1,0 0 2 1,1 0 0 3,0 0 0 0,1 0 5 3,2 0 0 0,0 1 1 3,0 0 0 5,0 0 0 5,0 0 3 0,1 0 2 2,0 0 2 2,0 1 4 4,0 0 4 4,",
        "0 0 6 4,1 0 0 4,2 0 3 0,2 1 0 1,1 1 5 6,1 0 0 3,3 1 0 1,0 0 4 2,0 1 0 1,0 0 1 6,5 2 0 0,3 3 0 0,0 3 0 4,3 7 0 0,0 0 2 4,0 0 4 6,",
        "0 0 6 5,0 0 3 5,1 0 3 4,0 1 0 1,0 0 1 0,1 1 0 1,0 0 0 4,4 0 0 1,4 3 0 0,0 1 4 6,0 0 3 3,1 1 0 0,0 3 0 3,0 0 2 3,0 0 0 3,0 0 5 2,",
        "0 0 2 2,0 0 3 1,1 1 0 1,0 0 3 3,0 0 2 2,1 2 0 4,0 1 0 1,3 3 0 0,1 0 3 2,0 0 4 5,7 3 0 0,2 0 4 0,4 1 0 0,2 0 0 2,0 0 4 3,0 0 3 4,",
        "0 0 6 5,1 1 4 4,3 0 0 2,2 1 0 0,0 0 0 0,1 0 0 5,1 1 0 1,0 0 2 0,1 1 3 2,0 0 3 4,0 1 0 6,0 0 0 4,0 0 1 1,0 0 4 6,5 3 0 0,0 0 2 5,",
        "0 0 0 3,0 0 3 0,3 4 0 0,0 0 3 3,1 0 3 2,0 0 0 0,0 0 4 2,0 0 1 6,2 0 0 3,1 0 2 5,0 0 4 2,0 0 1 2,0 0 3 3,1 4 0 0,0 0 1 2,0 2 0 5,",
        "0 1 2 5,0 0 0 5,0 0 3 2,1 3 4 4,0 2 0 2,0 0 3 4,0 0 1 2,0 0 1 4,1 0 3 0,0 0 1 0,0 1 0 1,0 1 0 2,0 5 0 5,1 2 0 0,3 3 0 0,3 2 0 0,",
        "0 0 3 6,1 0 3 0,0 1 2 5,0 2 0 4,0 0 2 5,0 0 5 6,1 0 0 1,1 0 3 6,1 7 0 0,0 0 6 6,0 1 4 4,0 0 5 6,0 0 0 6,0 0 3 0,2 0 0 0,0 0 0 2,",
        "1 0 0 0,0 0 4 5,1 0 3 5,0 0 0 4,0 0 2 2,0 0 0 2,0 0 4 3,1 3 0 0,2 1 0 0,0 0 4 2,0 0 1 2,2 3 0 0,4 2 0 0,0 0 3 5,4 1 0 0,4 5 0 0,",
        "5 0 0 2,0 0 1 4,4 3 0 0,7 1 0 0,2 1 0 2,0 0 0 3,1 0 0 1,0 0 5 5,5 2 0 0,2 0 3 0,0 0 1 2,0 0 0 4,0 0 0 2,1 2 0 6,0 0 2 6,1 1 0 0,",
        "0 2 0 6,0 0 0 0,0 0 6 6,0 2 0 2,0 0 6 4,2 1 0 0,0 0 6 5,0 0 1 3,1 0 0 0,0 0 0 4,0 0 6 1,1 0 0 3,2 2 0 0,0 0 0 0,0 0 4 2,7 2 0 0,",
        "0 0 3 6,1 0 3 1,0 0 0 4,2 1 0 0,4 6 0 0,0 0 2 6,1 0 6 4,1 2 0 0,3 1 0 1,1 3 0 0,0 0 3 6,0 0 1 3,1 2 0 0,1 7 0 0,0 4 0 4,4 3 0 3,",
        "0 1 0 5,0 0 4 5,0 0 5 1,0 0 1 3,0 0 6 3,3 3 0 0,0 0 3 3,0 0 1 5,4 2 0 0,6 1 0 0,0 0 6 2,0 2 1 2"
    ].joined()

    func testBoxesMatchThumborsOwnCOnSeededImages() throws {
        let expected = Self.recorded.split(separator: ",").map { $0.split(separator: " ").map { Int($0)! } }
        XCTAssertEqual(expected.count, 300)
        var generator = Generator(state: Self.seed)
        var mismatches = 0
        for (index, box) in expected.enumerated() {
            let (width, height) = (1 + generator.draw() % 7, 1 + generator.draw() % 7)
            let reference: SourceTrim.Reference = generator.draw() % 2 == 0 ? .topLeft : .bottomRight
            let tolerance = Self.tolerances[generator.draw() % 4]
            var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
            for y in 0..<height {
                for x in 0..<width {
                    let i = generator.draw() % 10
                    buffer.setPixel(x: x, y: y, to: i < 5 ? Self.palette[0] : Self.palette[i - 5])
                }
            }
            // thumbor ignores the trim when its box is inverted; otherwise right and bottom are inclusive.
            let thumbor = box[2] < box[0] || box[3] < box[1] ? nil
                : SourceCrop(left: box[0], top: box[1], right: box[2] + 1, bottom: box[3] + 1)
            let ours = SourceTrim(reference: reference, tolerance: tolerance).boundingBox(of: buffer)
            if ours != thumbor {
                mismatches += 1
                XCTFail("seed \(Self.seed), image \(index) (\(width) × \(height), \(reference), tolerance \(tolerance)): "
                        + "thumbor \(String(describing: thumbor)), ours \(String(describing: ours))")
            }
        }
        XCTAssertEqual(mismatches, 0, "seed \(Self.seed): regenerate with scripts/thumbor-compat/trim_boxes.py")
    }
}
