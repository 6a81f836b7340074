import ImageCodec
import WebImageServerCore
import XCTest

/// `OutputGeometry.decodePixelSize` asks the downsampled decode for exactly the scaled size whenever some decode
/// size gives it, so `shape` never makes a second, almost 1:1 resize (which blurs every fine line: a 1707 px
/// diagram at `w=1200` was decoded 1201 px wide, then resized 1201 → 1200, SSIMULACRA2 80 instead of 93+).
final class OutputGeometryDecodeSizeTests: XCTestCase {
    /// The smallest longest side whose `PixelBuffer.fittingSize` covers the scaled size, found by trying them all.
    private func smallestCoveringSide(_ g: OutputGeometry, width: Int, height: Int) -> Int? {
        for side in 1..<max(width, height) {
            let fitted = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: side)
            if fitted.width >= g.scaledWidth && fitted.height >= g.scaledHeight { return side }
        }
        return nil
    }

    func testTheDiagramAt1200WideIsDecodedAtItsScaledSize() {
        let g = OutputGeometry(sourceWidth: 1707, sourceHeight: 1008, targetWidth: 1200, targetHeight: nil, fit: .contain)
        XCTAssertEqual(g.scaledWidth, 1200)
        XCTAssertEqual(g.scaledHeight, 709)
        XCTAssertEqual(g.decodePixelSize, 1200)
        let decoded = PixelBuffer.fittingSize(width: 1707, height: 1008, maxPixelSize: g.decodePixelSize!)
        XCTAssertEqual(decoded.width, 1200)
        XCTAssertEqual(decoded.height, 709)
    }

    /// Every fit and box over a spread of source sizes: the decode covers the scaled size and is the smallest
    /// that does (so it is the scaled size itself whenever a decode size gives it).
    func testDecodeSizeIsTheSmallestThatCoversTheScaledSize() {
        var checked = 0
        for (width, height) in [(1707, 1008), (1008, 1707), (3000, 2000), (2001, 1333), (640, 480), (5470, 3646), (999, 1000),
                                (1000, 1000), (4032, 3024), (123, 4567)] {
            for (tw, th) in [(1200, nil), (400, 300), (nil, 300), (300, 400), (333, nil), (nil, 577), (100, 100)] as [(Int?, Int?)] {
                for fit in [ImageFit.cover, .contain, .outside] {
                    let g = OutputGeometry(sourceWidth: width, sourceHeight: height, targetWidth: tw, targetHeight: th, fit: fit)
                    let expected = smallestCoveringSide(g, width: width, height: height)
                    XCTAssertEqual(g.decodePixelSize, expected, "\(width)×\(height) → \(String(describing: tw))×\(String(describing: th)) \(fit)")
                    if let side = g.decodePixelSize {
                        let decoded = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: side)
                        XCTAssertGreaterThanOrEqual(decoded.width, g.scaledWidth)
                        XCTAssertGreaterThanOrEqual(decoded.height, g.scaledHeight)
                    }
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, 210)
    }
}
