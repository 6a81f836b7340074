import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// `ColorConversion.deepThumbnail`: a deep image's thumbnail averaged at 16 bits to a grid of at most twice the
/// thumbnail per side, converted there at 16 bits, then resized: the transform runs on the grid, not the image.
final class ColorDeepThumbnailTests: XCTestCase {
    private func p3Conversion() throws -> ColorConversion {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3])
        let p3 = try Data(contentsOf: URL(fileURLWithPath: ColorTestSupport.displayP3))
        return ColorConversion(colorSpace: ImageColorSpace(iccProfile: p3), management: .sRGB)
    }

    /// A smooth 16-bit RGBA image with a transparent corner, rows padded to `bytesPerRow`.
    private func deepImage(width: Int, height: Int, padding: Int = 24) -> (pixels: [UInt16], bytesPerRow: Int) {
        let bytesPerRow = width * 8 + padding
        var pixels = [UInt16](repeating: 0xABCD, count: bytesPerRow / 2 * height)
        for y in 0..<height {
            for x in 0..<width {
                let o = y * bytesPerRow / 2 + x * 4
                pixels[o] = UInt16(x * 65535 / max(1, width - 1))
                pixels[o + 1] = UInt16(y * 65535 / max(1, height - 1))
                pixels[o + 2] = UInt16((x * 7 + y * 13) % 65536)
                pixels[o + 3] = x < width / 10 && y < height / 10 ? 0 : (x + y) % 3 == 0 ? 40000 : 65535
            }
        }
        return (pixels, bytesPerRow)
    }

    /// The same steps written plainly (per cell: alpha-weighted sums in doubles, rounded as the code does), then
    /// the stage's 16-bit transform and the Lanczos3 resize.
    private func naiveThumbnail(_ pixels: [UInt16], width: Int, height: Int, bytesPerRow: Int, maxPixelSize: Int,
                                conversion: ColorConversion) throws -> PixelBuffer {
        let grid = ColorConversion.deepThumbnailGridSize(width: width, height: height, maxPixelSize: maxPixelSize)
        let k = ColorConversion.deepThumbnailShrinkFactor(width: width, height: height, maxPixelSize: maxPixelSize)
        XCTAssertEqual(grid.width, (width + k - 1) / k)
        var averaged = [UInt16](repeating: 0, count: grid.width * grid.height * 4)
        for gy in 0..<grid.height {
            for gx in 0..<grid.width {
                var sums = [UInt64](repeating: 0, count: 4), count: UInt64 = 0
                for y in (gy * k)..<min(height, (gy + 1) * k) {
                    for x in (gx * k)..<min(width, (gx + 1) * k) {
                        let o = y * bytesPerRow / 2 + x * 4, a = UInt64(pixels[o + 3])
                        for c in 0..<3 { sums[c] += UInt64(pixels[o + c]) * a }
                        sums[3] += a
                        count += 1
                    }
                }
                let o = (gy * grid.width + gx) * 4
                guard sums[3] > 0 else { continue }
                for c in 0..<3 { averaged[o + c] = UInt16((sums[c] + sums[3] / 2) / sums[3]) }
                averaged[o + 3] = UInt16((sums[3] + count / 2) / count)
            }
        }
        var converted = try PixelBuffer(width: grid.width, height: grid.height, pixelFormat: .rgba8)
        XCTAssertTrue(averaged.withUnsafeBytes { conversion.convert(rgba16: $0, bytesPerRow: grid.width * 8, into: &converted) })
        let target = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: maxPixelSize)
        return target.width == grid.width && target.height == grid.height
            ? converted : try converted.resized(width: target.width, height: target.height)
    }

    func testThumbnailIsTheGridConvertedThenResized() throws {
        let conversion = try p3Conversion()
        XCTAssertTrue(conversion.convertsDeepPixels)
        // Uneven cells, a grid the image's own size on one side, a thumbnail larger than the image.
        for (width, height, size) in [(1001, 333, 100), (640, 480, 320), (97, 31, 50), (40, 30, 200), (1, 900, 64)] {
            let (pixels, stride) = deepImage(width: width, height: height)
            let ours = try XCTUnwrap(pixels.withUnsafeBytes {
                try conversion.deepThumbnail(rgba16: $0, width: width, height: height, bytesPerRow: stride, maxPixelSize: size)
            })
            let target = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: size)
            XCTAssertEqual(ours.width, target.width, "\(width)×\(height) @\(size)")
            XCTAssertEqual(ours.height, target.height)
            XCTAssertEqual(ours, try naiveThumbnail(pixels, width: width, height: height, bytesPerRow: stride,
                                                    maxPixelSize: size, conversion: conversion), "\(width)×\(height) @\(size)")
        }
    }

    /// The shrunk image keeps at least twice the thumbnail per side when it shrinks at all (the Lanczos still does
    /// a real reduction), at most four times (the transform's work is bounded by the thumbnail, not the image),
    /// never more than the image, and is counted in the working bytes.
    func testGridIsBoundedByTheThumbnail() {
        for (width, height, size) in [(6000, 4000, 400), (4000, 6000, 256), (300, 200, 400), (65_000, 3, 100), (799, 799, 200),
                                      (800, 800, 200), (1600, 1200, 400)] {
            let grid = ColorConversion.deepThumbnailGridSize(width: width, height: height, maxPixelSize: size)
            let k = ColorConversion.deepThumbnailShrinkFactor(width: width, height: height, maxPixelSize: size)
            let target = PixelBuffer.fittingSize(width: width, height: height, maxPixelSize: size)
            if k > 1 {
                XCTAssertLessThanOrEqual(grid.width, 4 * target.width, "\(width)×\(height) @\(size)")
                XCTAssertLessThanOrEqual(grid.height, 4 * target.height)
                XCTAssertGreaterThanOrEqual(grid.width, 2 * target.width)
                XCTAssertGreaterThanOrEqual(grid.height, 2 * target.height)
            } else {
                // Under twice the thumbnail on a side (or an extreme aspect ratio): the image itself.
                XCTAssertEqual(grid.width, width)
                XCTAssertEqual(grid.height, height)
            }
            XCTAssertGreaterThanOrEqual(grid.width, target.width)
            XCTAssertEqual(ColorConversion.deepThumbnailWorkingByteCount(width: width, height: height, maxPixelSize: size),
                           grid.width * grid.height * 12)
        }
    }

    /// Against converting the whole image at 16 bits and resizing: within CIEDE2000 mean 0.5 (the order of the
    /// two steps is the only difference).
    func testCloseToConvertingTheWholeImageFirst() throws {
        let conversion = try p3Conversion()
        let (width, height) = (800, 600)
        let (pixels, stride) = deepImage(width: width, height: height, padding: 0)
        let ours = try XCTUnwrap(pixels.withUnsafeBytes {
            try conversion.deepThumbnail(rgba16: $0, width: width, height: height, bytesPerRow: stride, maxPixelSize: 200)
        })
        var whole = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        XCTAssertTrue(pixels.withUnsafeBytes { conversion.convert(rgba16: $0, bytesPerRow: stride, into: &whole) })
        let reference = try whole.resized(maxPixelSize: 200)
        let stats = try XCTUnwrap(ColorDifference.stats(ours, reference))
        print("deep thumbnail vs whole-then-resize: \(stats)")
        XCTAssertLessThanOrEqual(stats.mean, 0.5, "\(stats)")
    }

    /// No deep transform (untagged, `.preserve`), sizes that do not fit, an empty source: `nil`, never a crash.
    func testDeclinesWhatItCannotDo() throws {
        let (pixels, stride) = deepImage(width: 64, height: 64)
        try pixels.withUnsafeBytes { raw in
            XCTAssertNil(try ColorConversion(colorSpace: nil, management: .sRGB)
                .deepThumbnail(rgba16: raw, width: 64, height: 64, bytesPerRow: stride, maxPixelSize: 16))
            let conversion = try p3Conversion()
            XCTAssertNil(try conversion.deepThumbnail(rgba16: raw, width: 64, height: 65, bytesPerRow: stride, maxPixelSize: 16))
            XCTAssertNil(try conversion.deepThumbnail(rgba16: raw, width: 64, height: 64, bytesPerRow: 64 * 8 - 1, maxPixelSize: 16))
            XCTAssertNil(try conversion.deepThumbnail(rgba16: raw, width: 64, height: 64, bytesPerRow: stride, maxPixelSize: 0))
            XCTAssertNil(try conversion.deepThumbnail(rgba16: UnsafeRawBufferPointer(start: nil, count: 0), width: 0, height: 0,
                                                      bytesPerRow: 0, maxPixelSize: 16))
        }
    }
}
