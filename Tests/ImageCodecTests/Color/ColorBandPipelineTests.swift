import Foundation
@testable import ImageCodec
import TestSupport
import WebImageSync
import XCTest

/// The colour transform of a large full-size decode runs band by band on a helper thread while the decoder
/// produces the next band (`ColorBandPipeline`): the pixels must be exactly those of converting after the
/// decode, on every path (whole, truncated, failing), and no thread may touch the rows once the decode returns.
final class ColorBandPipelineTests: XCTestCase {
    /// A `size` × `size` chart JPEG (our encoder) with `profile` embedded: 1100² is 1.2 Mpx, over the pipeline's
    /// threshold, and 1100 rows are 65 bands plus a short last one.
    private func taggedJPEG(_ profile: Data, size: Int = 1100) throws -> Data {
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
        encoder.addFrame(try ColorTestSupport.chart(size: size))
        return ICCEmbedding.embed(profile, in: try encoder.encode(), format: .jpeg, width: size, height: size)
    }

    /// What the decode must give: the `.preserve` pixels (same decode, no transform) converted by the stage's
    /// transform after the decode, on this thread.
    private func serialReference(_ data: Data) throws -> (expected: PixelBuffer, partial: Bool) {
        let preserved = try ColorTestSupport.decode(data, .preserve)
        let icc = try XCTUnwrap(preserved.colorSpace?.iccProfile)
        let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: icc), layout: .rgba, management: .sRGB)
        XCTAssertNotNil(plan.transform, "the profile is converted")
        var expected = preserved.firstFrame.buffer
        plan.apply(to: &expected)
        return (expected, preserved.isPartial)
    }

    func testLargeTaggedJPEGIsExactlyTheSerialConversion() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB])
        XCTAssertTrue(ColorBandPipeline.isWorthwhile(width: 1100, height: 1100) || ProcessInfo.processInfo.activeProcessorCount == 1)
        for path in [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB] {
            let data = try taggedJPEG(Data(contentsOf: URL(fileURLWithPath: path)))
            let (expected, _) = try serialReference(data)
            let ours = try ColorTestSupport.decode(data)
            XCTAssertEqual(ours.firstFrame.buffer, expected, path)
            // Premultiplied output of an opaque JPEG: the same bytes.
            let premultiplied = try ImageDecoder.decode(data, options: DecodeOptions(pixelFormat: .rgba8Premultiplied))
            XCTAssertEqual(premultiplied.firstFrame.buffer.withUnsafeBytes { Array($0) }, expected.withUnsafeBytes { Array($0) })
        }
    }

    /// Sizes at and around the threshold and the band height: one row, a band and one row more, a short last band.
    func testEveryRowIsConvertedAtBandEdges() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3])
        let p3 = try Data(contentsOf: URL(fileURLWithPath: ColorTestSupport.displayP3))
        for (width, height) in [(1000, 1000), (999, 1000), (4000, 250), (4000, 257), (16384, 65)] {
            var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9))
            var canvas = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
            canvas.withUnsafeMutableBytes { bytes in
                for i in 0..<bytes.count { bytes[i] = i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: (i / 4) &* 2_654_435_761 >> 24) }
            }
            encoder.addFrame(canvas)
            let data = ICCEmbedding.embed(p3, in: try encoder.encode(), format: .jpeg, width: width, height: height)
            XCTAssertEqual(try ColorTestSupport.decode(data).firstFrame.buffer, try serialReference(data).expected, "\(width)×\(height)")
        }
    }

    /// A download cut short: libjpeg's fill rows and the cleared rows are converted as before, and the image is
    /// partial.
    func testTruncatedTaggedJPEGIsExactlyTheSerialConversion() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3])
        let whole = try taggedJPEG(Data(contentsOf: URL(fileURLWithPath: ColorTestSupport.displayP3)))
        for fraction in [0.2, 0.6, 0.95] {
            let data = whole.prefix(Int(Double(whole.count) * fraction))
            let (expected, partial) = try serialReference(data)
            XCTAssertTrue(partial, "cut at \(fraction)")
            let ours = try ColorTestSupport.decode(data)
            XCTAssertTrue(ours.isPartial)
            XCTAssertEqual(ours.firstFrame.buffer, expected, "cut at \(fraction)")
        }
    }

    /// The corpus's 1000 × 1000 Display P3 PNG (exactly the threshold) through the pipelined row loop and through
    /// the one-shot decode and a conversion after it: the same pixels.
    func testLargeTaggedPNGPipelinedIsExactlyTheSerialConversion() throws {
        let data = try Data(contentsOf: ColorTestSupport.corpusFile("png/sdwebp_TestDisplayP3.png"))
        func decode(pipelined: Bool) throws -> PixelBuffer {
            try data.withUnsafeBytes { bytes in
                let session = try PNGDecodeSession(bytes: bytes, format: .png)
                let header = try session.readInfo()
                XCTAssertTrue(ColorBandPipeline.isWorthwhile(width: header.width, height: header.height)
                              || ProcessInfo.processInfo.activeProcessorCount == 1)
                let colorSpace = PNGColorChunks.read(bytes)
                let plan = ColorStage.plan(colorSpace: colorSpace, layout: PNGDecoder.colorLayout(colorType: header.colorType),
                                           management: .sRGB)
                XCTAssertNotNil(plan.transform)
                return try PNGDecoder.decodeBuffer(session, header: header, options: DecodeOptions(pixelFormat: .rgba8),
                                                   color: plan, pipelinesColor: pipelined)
            }
        }
        let pipelined = try decode(pipelined: true)
        XCTAssertEqual(pipelined, try decode(pipelined: false))
        XCTAssertEqual(try ColorTestSupport.decode(data).firstFrame.buffer, pipelined)
    }

    /// Little CMS (not the fast path: a CMYK press profile, whose bands also get alpha 255) on many bands at
    /// once: lcms's NOCACHE transforms on disjoint rows give what one call on the whole buffer gives.
    func testLittleCMSTransformThroughThePipelineMatchesOneCall() throws {
        let cmykFile = try ColorTestSupport.corpusFile("jpeg/thumbor_cmyk-icc.jpg")
        let profile = try XCTUnwrap(try ImageDecoder.decode(Data(contentsOf: cmykFile),
                                                             options: DecodeOptions(maxPixelSize: 16, colorManagement: .preserve))
            .colorSpace?.iccProfile)
        let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: profile), layout: .cmyk, management: .sRGB,
                                   cache: ColorTransformCache())
        let transform = try XCTUnwrap(plan.transform)
        XCTAssertFalse(transform.isMatrixShaper)
        let (width, height) = (1500, 700)
        var source = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        source.withUnsafeMutableBytes { bytes in
            for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 20) }
        }
        var expected = source
        transform.apply(to: &expected)
        var ours = source
        let stride = ours.bytesPerRow
        try ours.withUnsafeMutableBytes { bytes in
            try ColorBandPipeline.run(transform, pixels: bytes.baseAddress!, width: width, bytesPerRow: stride) { bandFinished in
                var y = 0
                while y < height {  // uneven bands, as a decoder's
                    let next = min(height, y + 1 + (y * 7) % 97)
                    bandFinished(y..<next)
                    y = next
                }
            }
        }
        XCTAssertEqual(ours, expected)
        XCTAssertNotEqual(ours, source)
    }

    /// Every band handed over is converted exactly once, before `run` returns, whatever the band sizes.
    func testEveryBandIsConvertedOnceBeforeReturn() throws {
        let rows = 5000
        let counts = Mutex([Int](repeating: 0, count: rows))
        let active = Mutex(0)
        for helpers in [1, 3] {
            counts.withLock { $0 = [Int](repeating: 0, count: rows) }
            try ColorBandPipeline.run(maximumHelpers: helpers, convert: { band in
                active.withLock { $0 += 1 }
                var checksum = 0
                for i in 0..<(band.count * 2000) { checksum &+= i &* 31 }  // some work, so helpers overlap
                counts.withLock { c in for y in band { c[y] += 1 + (checksum == -1 ? 1 : 0) } }
                active.withLock { $0 -= 1 }
            }, decode: { bandFinished in
                var y = 0
                while y < rows {
                    let next = min(rows, y + 1 + y % 13)
                    bandFinished(y..<next)
                    y = next
                }
            })
            XCTAssertEqual(active.withLock { $0 }, 0, "no conversion runs after run returned")
            XCTAssertEqual(counts.withLock { $0 }, [Int](repeating: 1, count: rows), "\(helpers) helpers")
        }
    }

    /// A decode that fails after handing over bands: the error comes back, bands not yet taken are never
    /// converted, and no conversion is still running when `run` throws (the rows may be freed at once).
    func testAFailingDecodeWaitsForTheBandsInFlight() throws {
        struct Failure: Error {}
        let active = Mutex(0)
        let converted = Mutex(0)
        let isReturned = Mutex(false)
        let lateConversions = Mutex(0)
        for attempt in 0..<20 {
            XCTAssertThrowsError(try ColorBandPipeline.run(maximumHelpers: 2, convert: { band in
                if isReturned.withLock({ $0 }) { lateConversions.withLock { $0 += 1 } }
                active.withLock { $0 += 1 }
                var checksum = 0
                for i in 0..<(band.count * 5000) { checksum &+= i }
                converted.withLock { $0 += checksum == -1 ? 0 : band.count }
                active.withLock { $0 -= 1 }
            }, decode: { bandFinished -> Void in
                for band in 0..<(10 + attempt) { bandFinished(band * 10..<(band + 1) * 10) }
                throw Failure()
            })) { XCTAssertTrue($0 is Failure) }
            isReturned.withLock { $0 = true }
            XCTAssertEqual(active.withLock { $0 }, 0, "attempt \(attempt): a band was still being converted after the throw")
            XCTAssertLessThanOrEqual(converted.withLock { $0 }, (10 + attempt) * 10)
            isReturned.withLock { $0 = false }
            converted.withLock { $0 = 0 }
        }
        XCTAssertEqual(lateConversions.withLock { $0 }, 0)
    }

    /// A corrupt JPEG that libjpeg gives up on mid-image (a fatal error after some bands): a typed error, no
    /// crash; the helpers' bands were waited for (the buffer is freed as the error propagates).
    func testCorruptTaggedJPEGFailsCleanly() throws {
        try ColorTestSupport.require(tools: [], files: [ColorTestSupport.displayP3])
        var data = try taggedJPEG(Data(contentsOf: URL(fileURLWithPath: ColorTestSupport.displayP3)))
        // Garbage over the second half of the entropy-coded data: warnings or a fatal error, never a crash.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in (data.count / 2)..<(data.count - 2) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            data[data.startIndex + i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        do {
            let image = try ColorTestSupport.decode(data)
            XCTAssertEqual(image.width, 1100)
            XCTAssertEqual(image.firstFrame.buffer, try serialReference(data).expected)
        } catch {
            XCTAssertTrue(error is ImageCodecError, "\(error)")
        }
    }
}
