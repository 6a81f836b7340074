import Foundation
import ImageCodec
import TestSupport
import XCTest

/// `DecodeOptions.maxPixelSize`: sizes, aspect, never enlarging, pixels close to full decode + resize, and
/// limits applied to what is allocated.
final class DownsampledDecodingTests: XCTestCase {
    private func thumbnail(_ data: Data, _ size: Int, limits: DecodeLimits = .default) throws -> Image {
        try ImageDecoder.decode(data, options: DecodeOptions(limits: limits, maxPixelSize: size))
    }

    private func reference(_ data: Data, width: Int, height: Int) throws -> PixelBuffer {
        try ImageDecoder.decode(data).firstFrame.buffer.resized(width: width, height: height)
    }

    func testJPEGThumbnailSizeAspectAndPixels() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 1000, height: 600), as: .jpeg)
        let image = try thumbnail(data, 200)
        XCTAssertEqual(image.width, 200)
        XCTAssertEqual(image.height, 120)
        XCTAssertEqual(image.format, .jpeg)
        let expected = try reference(data, width: 200, height: 120)
        let psnr = ReferenceDecoder.psnr(image.firstFrame.buffer.packedBytes, expected.packedBytes)
        XCTAssertGreaterThan(psnr, 32, "DCT-scaled thumbnail should match full decode + resize")
    }

    func testJPEGPortraitUsesEveryScale() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 480, height: 800), as: .jpeg)
        // 800 → 90 uses 1/8 (100), → 150 uses 1/4 (200), → 300 uses 1/2 (400), → 700 full size.
        for target in [90, 150, 300, 700] {
            let image = try thumbnail(data, target)
            XCTAssertEqual(image.height, target)
            XCTAssertEqual(image.width, Int((480.0 * Double(target) / 800).rounded()))
            let expected = try reference(data, width: image.width, height: image.height)
            XCTAssertGreaterThan(ReferenceDecoder.psnr(image.firstFrame.buffer.packedBytes, expected.packedBytes), 30,
                                 "target \(target)")
        }
    }

    /// `JPEGDecoder.thumbnailScaleDenominator` is the decoder's own choice: a shrink-on-load decode
    /// (`resizesToFit` false) is exactly `ceil(side / d)` per side, and `thumbnailIntermediateSize` agrees, for odd
    /// sizes, extreme aspect ratios and every request from 1 px to past the full size (the server maps a cover's
    /// window by `1 / d`: a wrong `d` moves it).
    func testScaleDenominatorIsTheDecodersOwn() throws {
        for (width, height) in [(1601, 1201), (97, 803), (803, 9), (16, 16)] {
            let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: width, height: height), as: .jpeg)
            let longest = max(width, height)
            var requests = Set([1, 2, 3, longest / 16, longest / 8 - 1, longest / 8, longest / 4, longest / 4 + 1,
                                longest / 2 - 1, longest / 2, longest / 2 + 1, longest - 1, longest, longest + 1, 5 * longest])
            requests = requests.filter { $0 >= 1 }
            var denominators = Set<Int>()
            for request in requests.sorted() {
                let d = JPEGDecoder.thumbnailScaleDenominator(width: width, height: height, maxPixelSize: request)
                XCTAssertTrue([1, 2, 4, 8].contains(d), "\(width)×\(height) at \(request): \(d)")
                denominators.insert(d)
                let decoded = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: request, resizesToFit: false))
                let expected = ((width + d - 1) / d, (height + d - 1) / d)
                XCTAssertEqual([decoded.width, decoded.height], [expected.0, expected.1], "\(width)×\(height) at \(request), d \(d)")
                let size = JPEGDecoder.thumbnailIntermediateSize(width: width, height: height, maxPixelSize: request)
                XCTAssertEqual([size.width, size.height], [expected.0, expected.1])
            }
            if longest >= 800 { XCTAssertEqual(denominators, [1, 2, 4, 8], "\(width)×\(height) reaches every scale") }
        }
    }

    /// A DCT-scaled decode is `ceil(side / d)` pixels for `side / d` of picture; resizing it as if its last pixel
    /// were whole put detail up to 0.2 output pixels off near the far edges (SSIMULACRA2 88.7 instead of 97 on a
    /// 5470 px photo at 400×300). Thin lines near the right and bottom edges of a 1601×1201 JPEG (1/2 scaling:
    /// 801×601 for 800.5×600.5) must land where the full decode's resize puts them.
    func testJPEGThumbnailPlacesDetailWhereTheFullSizeResizeDoes() throws {
        for (width, height, size) in [(1601, 1201, 400), (1601, 1201, 200)] {  // 1/2 and 1/4 scaling
            var source = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
            let (lineX, lineY) = (width * 15 / 16, height * 15 / 16)
            for y in 0..<height {
                for x in 0..<width {
                    let dark = (x >= lineX && x < lineX + 3) || (y >= lineY && y < lineY + 3)
                    source.setPixel(x: x, y: y, to: dark ? RGBA(r: 0, g: 0, b: 0, a: 255) : RGBA(r: 255, g: 255, b: 255, a: 255))
                }
            }
            var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 1, chromaSubsampling: .yuv444))
            encoder.addFrame(source)
            let data = try encoder.encode()
            let image = try thumbnail(data, size)
            let expected = try reference(data, width: image.width, height: image.height)
            // The darkness-weighted centre of the vertical line along the middle row, and of the horizontal one
            // along the middle column.
            func centre(_ buffer: PixelBuffer, vertical: Bool) -> Double {
                var (sum, weight) = (0.0, 0.0)
                let count = vertical ? buffer.height : buffer.width
                for i in count / 2 ..< count {
                    let p = vertical ? buffer.pixel(x: buffer.width / 4, y: i) : buffer.pixel(x: i, y: buffer.height / 4)
                    let darkness = 255 - Double(p.g)
                    sum += darkness * Double(i)
                    weight += darkness
                }
                return sum / max(weight, 1)
            }
            for vertical in [false, true] {
                let got = centre(image.firstFrame.buffer, vertical: vertical)
                let want = centre(expected, vertical: vertical)
                // 0.08: the two are different filters (DCT scaling then Lanczos3, against one Lanczos3 of the full
                // decode: 0.055 apart at 1601 → 400 since the full decode's 4× shrink is no longer box-averaged by
                // 2 first); the drift this guards against is 0.2.
                XCTAssertEqual(got, want, accuracy: 0.08, "\(width)×\(height) \(vertical ? "row" : "column") of the line")
            }
        }
    }

    func testNeverEnlargesAndEqualsFullDecode() throws {
        let source = try DownsampleFixtures.photo(width: 120, height: 80, alpha: true)
        for format in [ImageFormat.jpeg, .png] {
            let data = try DownsampleFixtures.encode(source, as: format)
            let full = try ImageDecoder.decode(data)
            for size in [120, 500] {
                let image = try thumbnail(data, size)
                XCTAssertEqual(image.width, 120)
                XCTAssertEqual(image.height, 80)
                XCTAssertEqual(image.firstFrame.buffer.packedBytes, full.firstFrame.buffer.packedBytes, "\(format)")
            }
        }
    }

    func testPNGThumbnailMatchesFullDecodeAndResize() throws {
        for (interlaced, format) in [(false, PixelBuffer.PixelFormat.rgba8Premultiplied), (true, .rgba8Premultiplied),
                                     (false, .rgba8)] {
            var encoder = ImageEncoder(format: .png, options: EncodeOptions(isProgressive: interlaced))
            encoder.addFrame(try DownsampleFixtures.photo(width: 900, height: 500, alpha: true))
            let data = try encoder.encode()
            let image = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: format, maxPixelSize: 100))
            XCTAssertEqual(image.width, 100)
            XCTAssertEqual(image.height, 56)
            XCTAssertEqual(image.pixelFormat, format)
            XCTAssertTrue(image.hasAlpha)
            let expected = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: format))
                .firstFrame.buffer.resized(width: 100, height: 56)
            let got = image.firstFrame.buffer.packedBytes
            if interlaced {
                // Adam7 goes through integer-factor boxes (here exactly 9×9 → 100×56) before the resize:
                // area averaging, close to but not the same as Lanczos3 of the full image.
                XCTAssertGreaterThan(ReferenceDecoder.psnr(got, expected.packedBytes), 30, "interlaced \(format)")
            } else {
                XCTAssertLessThanOrEqual(ReferenceDecoder.maxDifference(got, expected.packedBytes), 3, "\(format)")
                XCTAssertGreaterThan(ReferenceDecoder.psnr(got, expected.packedBytes), 45)
            }
        }
    }

    func testPNGThumbnailNeverAllocatesFullSize() throws {
        // 3000×2000 = 6 Mpx; limits allow 2 Mpx: the full decode must fail, the thumbnail must not.
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 3000, height: 2000), as: .png)
        let limits = DecodeLimits(maxPixelsPerFrame: 2_000_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits))) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, _, _) = error else { return XCTFail("\(error)") }
        }
        let image = try thumbnail(data, 300, limits: limits)
        XCTAssertEqual(image.width, 300)
        XCTAssertEqual(image.height, 200)
        // A thumbnail over the limit is still refused.
        XCTAssertThrowsError(try thumbnail(data, 2000, limits: limits))
        // A source over the work cap (4 × the per-frame limit) is refused from the header.
        XCTAssertThrowsError(try thumbnail(data, 300, limits: DecodeLimits(maxPixelsPerFrame: 1_000_000)))
    }

    func testJPEGThumbnailUnderLimitsThatForbidFullSize() throws {
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 2000, height: 1200), as: .jpeg)
        let limits = DecodeLimits(maxPixelsPerFrame: 700_000)
        XCTAssertThrowsError(try ImageDecoder.decode(data, options: DecodeOptions(limits: limits)))
        let image = try thumbnail(data, 250, limits: limits)
        XCTAssertEqual(image.width, 250)
        XCTAssertEqual(image.height, 150)
    }

    func testHugeJPEGOverDefaultLimitDecodesAsThumbnail() throws {
        // A 64×64 JPEG whose SOF0 claims 16500×16500 (272 Mpx > 16384², the default per-frame limit); the
        // scan ends early, so libjpeg fills the rest (with a warning), but the header and the limits are real.
        var data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 64, height: 64), as: .jpeg)
        let bytes = [UInt8](data)
        guard let sof = (0..<bytes.count - 9).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) else {
            return XCTFail("no SOF0")
        }
        data.replaceSubrange(sof + 5 ..< sof + 9, with: [0x40, 0x74, 0x40, 0x74])  // 16500 = 0x4074
        XCTAssertEqual(try ImageDecoder.info(data).width, 16500)
        XCTAssertThrowsError(try ImageDecoder.decode(data)) { error in
            guard case ImageCodecError.limitExceeded(.pixelsPerFrame, _, _) = error else { return XCTFail("\(error)") }
        }
        let image = try thumbnail(data, 64)
        XCTAssertEqual(image.width, 64)
        XCTAssertEqual(image.height, 64)
    }

    func testDecompressionBombStillRejectedByWorkCap() throws {
        // The corpus's 65536×65536 PNG (4.3 Gpx) is over the thumbnail work cap: rejected from the header.
        let entry = try Corpus.entries().first { $0.path == "png/sharp_65536-uint32-limit.png" }
        guard let entry else { throw XCTSkip("corpus lacks png/sharp_65536-uint32-limit.png") }
        let data = try Data(contentsOf: entry.url)
        XCTAssertThrowsError(try thumbnail(data, 256)) { error in
            guard case ImageCodecError.limitExceeded = error else { return XCTFail("\(error)") }
        }
    }

    func testCorpusThumbnailsHaveFittingSizes() throws {
        let entries = try Corpus.entries().filter { $0.isExpectedOK && !$0.isHuge && ["jpeg", "png"].contains($0.format) }
        XCTAssertFalse(entries.isEmpty)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            guard let full = try? ImageDecoder.decode(data) else { continue }  // other tests cover full decodes
            let image = try thumbnail(data, 32)
            let size = PixelBuffer.fittingSize(width: full.width, height: full.height, maxPixelSize: 32)
            XCTAssertEqual(image.width, size.width, entry.path)
            XCTAssertEqual(image.height, size.height, entry.path)
            XCTAssertEqual(image.orientation, full.orientation, entry.path)
        }
    }
}

/// Animated images with `maxPixelSize` give a still thumbnail of their first frame.
final class DownsampledAnimationTests: XCTestCase {
    func testAnimatedCorpusFilesGiveFirstFrameStills() throws {
        let entries = try Corpus.entries().filter {
            $0.isExpectedOK && !$0.isHuge && ["gif", "apng", "webp"].contains($0.format) && ($0.frameCount ?? 1) > 1
        }
        XCTAssertFalse(entries.isEmpty)
        var checked = 0
        for entry in entries.prefix(40) {
            let data = try Data(contentsOf: entry.url)
            guard let full = try? ImageDecoder.decode(data, options: DecodeOptions(firstFrameOnly: true)) else { continue }  // rejected files: other tests cover them
            guard max(full.width, full.height) > 24 else {
                XCTAssertEqual(try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 24)).frameCount,
                               try ImageDecoder.decode(data).frameCount, "an animation that fits stays animated")
                continue
            }
            let image = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 24))
            XCTAssertEqual(image.frameCount, 1, entry.path)
            XCTAssertEqual(image.loopCount, 1, entry.path)
            let expected = try full.firstFrame.buffer.resized(maxPixelSize: 24)
            XCTAssertEqual(image.width, expected.width, entry.path)
            XCTAssertEqual(image.height, expected.height, entry.path)
            // Stills go through integer-factor boxes (no canvas-sized buffer: GIFDecoder.decodeThumbnail,
            // FirstFrameThumbnail) before the resize: exactly the box average of the first frame composited on
            // its transparent canvas, premultiplied as `PixelBuffer.converted` does (from a straight decode, so
            // libwebp's own premultiplication does not enter), resized.
            let straight = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8, firstFrameOnly: true))
            let boxed = try BoxReference.thumbnail(of: straight.firstFrame.buffer.converted(to: .rgba8Premultiplied),
                                                   width: expected.width, height: expected.height)
            XCTAssertEqual(image.firstFrame.buffer.packedBytes, boxed.packedBytes, entry.path)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 5)
    }
}
