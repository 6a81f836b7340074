import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// decode(encode(x)) for JPEG (close), PNG and APNG (exact), and the orientation helper.
final class JPEGPNGRoundTripTests: XCTestCase {
    /// A smooth, photo-like opaque pattern with some detail.
    static func photoPattern(width: Int, height: Int, alpha: Bool = false) throws -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let o = (y * width + x) * 4
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                bytes[o] = UInt8(127.5 + 127.5 * sin(fx * 6.3 + fy * 2))
                bytes[o + 1] = UInt8(255 * fy)
                bytes[o + 2] = UInt8(127.5 + 127.5 * cos(fx * fy * 9))
                if alpha { bytes[o + 3] = UInt8((x * 7 + y * 3) % 256) }
            }
        }
        return try PixelBuffer(width: width, height: height, pixelFormat: .rgba8, bytes: bytes)
    }

    func testJPEGRoundTripIsCloseAtQuality09BaselineAndProgressive() throws {
        let source = try Self.photoPattern(width: 160, height: 96)
        for progressive in [false, true] {
            let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.9, isProgressive: progressive))
            let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
            XCTAssertEqual(image.format, .jpeg)
            XCTAssertEqual(image.isProgressive, progressive)
            XCTAssertEqual(image.width, 160)
            XCTAssertFalse(image.hasAlpha)
            let psnr = ReferenceDecoder.psnr(image.firstFrame.buffer.packedBytes, source.packedBytes)
            XCTAssertGreaterThanOrEqual(psnr, 30, "progressive \(progressive)")
        }
        let low = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.1))
        let high = try JPEGEncoder.encode(source, options: EncodeOptions(quality: 0.9))
        XCTAssertLessThan(low.count, high.count)
    }

    func testPNGRoundTripIsExactWithStraightAlphaAndInterlace() throws {
        let source = try Self.photoPattern(width: 33, height: 17, alpha: true)
        for interlaced in [false, true] {
            let data = try PNGEncoder.encode(source, options: EncodeOptions(isProgressive: interlaced))
            let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
            XCTAssertEqual(image.format, .png)
            XCTAssertTrue(image.hasAlpha)
            XCTAssertEqual(image.isProgressive, interlaced)
            XCTAssertEqual(image.firstFrame.buffer, source, "interlaced \(interlaced)")
            // Decoding for display premultiplies exactly like PixelBuffer.convert.
            let display = try ImageDecoder.decode(data)
            XCTAssertEqual(display.firstFrame.buffer, source.converted(to: .rgba8Premultiplied))
        }
        let opaque = try Self.photoPattern(width: 20, height: 10)
        let image = try ImageDecoder.decode(try PNGEncoder.encode(opaque, options: EncodeOptions()))
        XCTAssertFalse(image.hasAlpha)
        XCTAssertEqual(image.firstFrame.buffer, opaque.converted(to: .rgba8Premultiplied))
    }

    func testAPNGRoundTripKeepsFramesDurationsAndLoopCount() throws {
        var encoder = ImageEncoder(format: .apng, loopCount: 3)
        var frames: [PixelBuffer] = []
        for i in 0..<4 {
            var frame = try Self.photoPattern(width: 24, height: 12, alpha: true)
            frame.setPixel(x: i, y: i, to: RGBA(r: 1, g: 2, b: 3, a: 200))
            frames.append(frame)
            encoder.addFrame(frame, duration: [0.1, 0.25, 0.04, 1.5][i])
        }
        let data = try encoder.encode()
        XCTAssertEqual(ImageFormat.sniff(data), .apng)
        let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8))
        XCTAssertEqual(image.frameCount, 4)
        XCTAssertEqual(image.loopCount, 3)
        XCTAssertEqual(image.storedLoopCount, 3)
        for i in 0..<4 {
            XCTAssertEqual(try image.frame(at: i).buffer, frames[i], "frame \(i)")
            XCTAssertEqual(image.duration(at: i), [0.1, 0.25, 0.04, 1.5][i], accuracy: 0.0005)
        }
        let info = try ImageDecoder.info(data)
        XCTAssertEqual(info.frameCount, 4)
        XCTAssertEqual(info.storedLoopCount, 3)
        // Re-encoding the decoded image keeps everything (Image.encoded(as:)).
        let again = try ImageDecoder.decode(try image.encoded(as: .apng), options: DecodeOptions(pixelFormat: .rgba8))
        XCTAssertEqual(again.frameCount, 4)
        XCTAssertEqual(again.loopCount, 3)
        XCTAssertEqual(try again.frame(at: 3).buffer, frames[3])
    }

    func testShortAPNGDelaysFollowTheBrowserRule() throws {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        encoder.addFrame(try PixelBuffer(width: 2, height: 2), duration: 0)
        encoder.addFrame(try PixelBuffer(width: 2, height: 2), duration: 0.01)
        let image = try ImageDecoder.decode(try encoder.encode())
        XCTAssertEqual(image.duration(at: 0), 0.1)
        XCTAssertEqual(image.duration(at: 1), 0.1)
        XCTAssertEqual(image.loopCount, 0)
    }

    func testOrientationHelperMapsCornersForAllEightOrientations() throws {
        // 3×2 source with distinct pixels; expected upright layouts written out by hand.
        var source = try PixelBuffer(width: 3, height: 2, pixelFormat: .rgba8)
        for y in 0..<2 { for x in 0..<3 { source.setPixel(x: x, y: y, to: RGBA(r: UInt8(y * 3 + x), g: 0, b: 0)) } }
        let expected: [ImageOrientation: [[UInt8]]] = [
            .up: [[0, 1, 2], [3, 4, 5]],
            .upMirrored: [[2, 1, 0], [5, 4, 3]],
            .down: [[5, 4, 3], [2, 1, 0]],
            .downMirrored: [[3, 4, 5], [0, 1, 2]],
            .leftMirrored: [[0, 3], [1, 4], [2, 5]],
            .right: [[3, 0], [4, 1], [5, 2]],
            .rightMirrored: [[5, 2], [4, 1], [3, 0]],
            .left: [[2, 5], [1, 4], [0, 3]],
        ]
        for (orientation, rows) in expected {
            let out = try JPEGOrientation.apply(orientation, to: source)
            XCTAssertEqual(out.height, rows.count, "\(orientation)")
            XCTAssertEqual(out.width, rows[0].count, "\(orientation)")
            let actual = (0..<out.height).map { y in (0..<out.width).map { x in out.pixel(x: x, y: y).r } }
            XCTAssertEqual(actual, rows, "\(orientation)")
        }
    }

    func testEXIFOrientationOfCorpusPairsShowsTheSameUprightImage() throws {
        // exif_Landscape_N.jpg all show the same upright picture once orientation N is applied (_0 stores an
        // out-of-range 0, shown as stored).
        let entries = try JPEGPNGCorpusCheck.entries(format: "jpeg")
        guard let reference = entries.first(where: { $0.path.hasSuffix("exif_Landscape_0.jpg") }) else {
            throw XCTSkip("exif_Landscape_0.jpg not in corpus")
        }
        let upright = try ImageDecoder.decode(try Data(contentsOf: reference.url)).firstFrame.buffer
        for n in 1...8 {
            guard let entry = entries.first(where: { $0.path.hasSuffix("exif_Landscape_\(n).jpg") }) else { continue }
            let image = try ImageDecoder.decode(try Data(contentsOf: entry.url))
            XCTAssertEqual(image.orientation.rawValue, n)
            let turned = try JPEGOrientation.apply(image.orientation, to: image.firstFrame.buffer)
            XCTAssertEqual(turned.width, upright.width, "orientation \(n)")
            XCTAssertEqual(turned.height, upright.height, "orientation \(n)")
            let psnr = ReferenceDecoder.psnr(turned.packedBytes, upright.packedBytes)
            XCTAssertGreaterThan(psnr, 25, "orientation \(n)")
        }
    }
}
