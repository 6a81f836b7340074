import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// Pixel, frame and scan bombs against the default `DecodeLimits` (issue 13): each is refused from its header
/// with a typed error before anything is allocated; an image exactly at a (small, configured) limit decodes.
final class DecodeBombTests: XCTestCase {
    /// 8661 × 8661 = 75,012,921 pixels: just over the default 75,000,000 per frame.
    static let overSide = 8661

    private func source(_ width: Int = 16, _ height: Int = 16) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height)
        for y in 0..<height { for x in 0..<width { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 13 & 255), g: UInt8(y * 7 & 255), b: 80, a: 255)) } }
        return buffer
    }

    private func encoded(_ format: ImageFormat, _ width: Int = 16, _ height: Int = 16, progressive: Bool = false) throws -> Data {
        var encoder = ImageEncoder(format: format, options: EncodeOptions(quality: 0.8, isProgressive: progressive))
        encoder.addFrame(try source(width, height))
        return try encoder.encode()
    }

    /// The bombs of the four formats, each declaring `side × side`.
    private func bombs(side: Int) throws -> [(ImageFormat, Data)] {
        [(.png, try DecodeBombs.png(try encoded(.png), width: side, height: side)),
         (.jpeg, try DecodeBombs.jpeg(try encoded(.jpeg), width: side, height: side)),
         (.gif, try DecodeBombs.gif(try encoded(.gif), width: side, height: side)),
         (.webp, try DecodeBombs.webp(try encoded(.webp), width: side, height: side))]
    }

    private func assertLimit(_ data: Data, _ expected: DecodeLimits.Limit, options: DecodeOptions = DecodeOptions(),
                             _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        let start = Date()
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: options), label, file: file, line: line) { error in
            guard case ImageCodecError.limitExceeded(let limit, _, _) = error else {
                return XCTFail("\(label): \(error), expected limitExceeded(\(expected))", file: file, line: line)
            }
            XCTAssertEqual(limit, expected, label, file: file, line: line)
        }
        print("HOSTILE-CODEC \(label): \(data.count) bytes, refused in \(String(format: "%.1f", Date().timeIntervalSince(start) * 1000)) ms")
    }

    func testDefaultsAreTheDocumentedServiceLimits() {
        let limits = DecodeLimits.default
        XCTAssertEqual(limits.maxPixelsPerFrame, 75_000_000)
        XCTAssertEqual(limits.maxTotalPixels, 200_000_000)
        XCTAssertEqual(limits.maxFrameCount, 1_000)
        XCTAssertEqual(limits.maxDimension, 32_768)
        XCTAssertEqual(DecodeLimits.maxScanCount, 500)
    }

    func testPixelBombsJustOverTheDefaultLimitAreRefusedFromTheHeader() throws {
        for (format, data) in try bombs(side: Self.overSide) {
            XCTAssertLessThan(data.count, 4096, "\(format) bomb is a tiny file")
            assertLimit(data, .pixelsPerFrame, "\(format) \(Self.overSide)x\(Self.overSide)")
        }
    }

    func testPerSideMaximumRefusesALongThinImage() throws {
        // 40000 × 2 is only 80,000 pixels, but wider than 32,768.
        let png = try DecodeBombs.png(try encoded(.png), width: 40_000, height: 2)
        assertLimit(png, .dimension, "png 40000x2")
        let jpeg = try DecodeBombs.jpeg(try encoded(.jpeg), width: 40_000, height: 2)
        assertLimit(jpeg, .dimension, "jpeg 40000x2")
        // A thumbnail's source is held to the per-side maximum too.
        assertLimit(png, .dimension, options: DecodeOptions(maxPixelSize: 64), "png 40000x2 thumbnail")
    }

    func testExactlyAtAConfiguredLimitDecodesAndOnePixelMoreDoesNot() throws {
        let limits = DecodeLimits(maxPixelsPerFrame: 48 * 32, maxDimension: 48)
        for format in [ImageFormat.png, .jpeg, .gif, .webp] {
            let atLimit = try encoded(format, 48, 32)
            let image = try ImageDecoder.decode(atLimit, options: DecodeOptions(limits: limits))
            XCTAssertEqual([image.width, image.height], [48, 32], "\(format) at the limit")
            assertLimit(try encoded(format, 48, 33), .pixelsPerFrame, options: DecodeOptions(limits: limits), "\(format) 48x33 over 48*32")
            assertLimit(try encoded(format, 49, 2), .dimension, options: DecodeOptions(limits: limits), "\(format) 49x2 over side 48")
        }
    }

    func testAnimationOfThousandsOfFramesIsRefused() throws {
        var encoder = ImageEncoder(format: .gif)
        let frame = try source(2, 2)
        for _ in 0..<3_000 { encoder.addFrame(frame, duration: 0.02) }
        let gif = try encoder.encode()
        assertLimit(gif, .frameCount, "gif 3000 frames")
        // First frame only still works: the cap is on what is decoded.
        let still = try ImageDecoder.decode(gif, options: DecodeOptions(firstFrameOnly: true))
        XCTAssertEqual(still.frameCount, 1)
        // Exactly at a configured frame cap, it decodes.
        let image = try ImageDecoder.decode(gif, options: DecodeOptions(limits: DecodeLimits(maxFrameCount: 3_000)))
        XCTAssertEqual(image.frameCount, 3_000)
    }

    func testProgressiveJPEGOfMoreThan500ScansIsRefused() throws {
        let progressive = try encoded(.jpeg, 16, 16, progressive: true)
        let bomb = try DecodeBombs.manyScans(progressive, scans: 600)
        assertLimit(bomb, .scanCount, options: DecodeOptions(limits: .none), "jpeg 600 scans")
        // The incremental decoder's stream stops too.
        let stream = try JPEGStreamSession()
        XCTAssertThrowsError(try {
            try stream.append(bomb, isFinal: true)
            _ = try stream.prepare(limits: .none)
            var buffer = [UInt8](repeating: 0, count: 16 * 16 * 4)
            _ = try buffer.withUnsafeMutableBytes { try stream.render(into: $0.baseAddress!, bytesPerRow: 64) }
        }()) { error in
            XCTAssertEqual(error as? ImageCodecError, .limitExceeded(limit: .scanCount, actual: 501, maximum: 500))
        }
        // 500 scans exactly still decode.
        let atLimit = try DecodeBombs.manyScans(progressive, scans: 500)
        XCTAssertEqual(try ImageDecoder.decode(atLimit).width, 16)
    }

    func testThumbnailOfAnImageTooLargeForAFullDecodeStillWorks() throws {
        // 9000 × 9000 (81 Mpx) is over the default 75 Mpx per frame, but its 256-pixel thumbnail is not.
        let jpeg = DecodeBombs.grayJPEG(width: 9000, height: 9000)
        assertLimit(jpeg, .pixelsPerFrame, "jpeg 9000x9000 full decode")
        let thumbnail = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: 256))
        XCTAssertEqual([thumbnail.width, thumbnail.height], [256, 256])
        XCTAssertEqual(Int(thumbnail.firstFrame.buffer.pixel(x: 100, y: 100).g), 128, accuracy: 2)
        // Exactly at a configured limit, the full decode works.
        let small = DecodeBombs.grayJPEG(width: 96, height: 80)
        let full = try ImageDecoder.decode(small, options: DecodeOptions(limits: DecodeLimits(maxPixelsPerFrame: 96 * 80)))
        XCTAssertEqual([full.width, full.height], [96, 80])
    }
}
