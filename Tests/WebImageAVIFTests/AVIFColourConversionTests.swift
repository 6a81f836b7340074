import CWebImageAVIF
import Foundation
import ImageCodec
import TestSupport
@testable import WebImageAVIF
import XCTest

/// `AVIFEncoder.convertBT601` (our fixed-point RGB → YCbCr for stills) against libavif's own `avifImageRGBToYUV` on
/// the same pixels: both must give the same planes within one code, equal on nearly every pixel, with the corners of
/// the RGB cube, greys and seeded random pixels, odd widths; the alpha plane exactly, and none for
/// an opaque image (libavif writes none for one either).
final class AVIFColourConversionTests: XCTestCase {
    private struct Planes {
        var y: [UInt8] = [], cb: [UInt8] = [], cr: [UInt8] = [], alpha: [UInt8]?
    }

    private func make(width: Int, height: Int, _ pixel: (Int, Int) -> RGBA) throws -> PixelBuffer {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let p = pixel(x, y)
                bytes += [p.r, p.g, p.b, p.a]
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    private func planes(of image: UnsafeMutablePointer<avifImage>, width: Int, height: Int) -> Planes {
        func read(_ plane: UnsafeMutablePointer<UInt8>?, _ rowBytes: UInt32) -> [UInt8] {
            guard let plane else { return [] }
            return (0..<height).flatMap { y in (0..<width).map { x in plane[y * Int(rowBytes) + x] } }
        }
        let p = image.pointee
        let alpha: [UInt8]? = p.alphaPlane == nil ? nil : read(p.alphaPlane, p.alphaRowBytes)
        return Planes(y: read(p.yuvPlanes.0, p.yuvRowBytes.0), cb: read(p.yuvPlanes.1, p.yuvRowBytes.1),
                      cr: read(p.yuvPlanes.2, p.yuvRowBytes.2), alpha: alpha)
    }

    private func convert(_ buffer: PixelBuffer, ours: Bool) throws -> Planes {
        let image = try XCTUnwrap(avifImageCreate(UInt32(buffer.width), UInt32(buffer.height), 8, AVIF_PIXEL_FORMAT_YUV444))
        defer { avifImageDestroy(image) }
        if ours {
            try AVIFEncoder.convertBT601(buffer, into: image)
        } else {
            XCTAssertEqual(AVIFEncoder.convertWithLibavif(buffer, into: image), AVIF_RESULT_OK)
        }
        return planes(of: image, width: buffer.width, height: buffer.height)
    }

    private func compare(_ buffer: PixelBuffer, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> (differing: Int, total: Int) {
        let ours = try convert(buffer, ours: true), theirs = try convert(buffer, ours: false)
        var differing = 0
        for (name, a, b) in [("Y", ours.y, theirs.y), ("Cb", ours.cb, theirs.cb), ("Cr", ours.cr, theirs.cr)] {
            XCTAssertEqual(a.count, b.count, "\(label) \(name)", file: file, line: line)
            for (i, (p, q)) in zip(a, b).enumerated() where p != q {
                differing += 1
                XCTAssertLessThanOrEqual(abs(Int(p) - Int(q)), 1, "\(label) \(name) at \(i): ours \(p), libavif \(q)", file: file, line: line)
            }
        }
        if buffer.isOpaque {
            XCTAssertNil(ours.alpha, "\(label): an opaque still has no alpha plane", file: file, line: line)
        } else {
            XCTAssertEqual(ours.alpha, theirs.alpha, "\(label): alpha", file: file, line: line)
        }
        return (differing, 3 * buffer.width * buffer.height)
    }

    func testCubeCornersAndGreysMatchLibavifExactly() throws {
        var colours: [RGBA] = []
        for r in [0, 255] { for g in [0, 255] { for b in [0, 255] { colours.append(RGBA(r: UInt8(r), g: UInt8(g), b: UInt8(b))) } } }
        for v in stride(from: 0, through: 255, by: 1) { colours.append(RGBA(r: UInt8(v), g: UInt8(v), b: UInt8(v))) }
        let image = try make(width: colours.count, height: 1) { x, _ in colours[x] }
        let (differing, _) = try compare(image, "corners and greys")
        XCTAssertEqual(differing, 0)
    }

    func testSeededRandomPixelsAreWithinOneCode() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        var differing = 0, total = 0
        for (width, height) in [(1, 1), (7, 3), (33, 17), (257, 9), (400, 300)] {
            let opaque = try make(width: width, height: height) { _, _ in RGBA(r: next(), g: next(), b: next()) }
            let clear = try make(width: width, height: height) { _, _ in RGBA(r: next(), g: next(), b: next(), a: next()) }
            for (buffer, label) in [(opaque, "opaque"), (clear, "transparent")] {
                let result = try compare(buffer, "seed \(seed) \(width)×\(height) \(label)")
                differing += result.differing
                total += result.total
            }
        }
        print("BT.601 conversion, seed \(seed): \(differing) of \(total) samples one code from libavif's")
        XCTAssertLessThan(Double(differing), 0.01 * Double(total), "seed \(seed)")
    }
}
