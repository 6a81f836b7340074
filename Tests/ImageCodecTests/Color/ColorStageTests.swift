import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// The colour stage itself: which profiles count as sRGB, hostile colour data, the transform cache, the options.
final class ColorStageTests: XCTestCase {
    private func profile(_ path: String) throws -> Data {
        try ColorTestSupport.require(tools: [], files: [path])
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// An untagged PNG of the chart (our encoder) and the same bytes with `profile` embedded.
    private func chartPNG(profile: Data? = nil) throws -> Data {
        let png = try Image(buffer: ColorTestSupport.chart()).encoded(as: .png)
        guard let profile else { return png }
        return ICCEmbedding.embed(profile, in: png, format: .png, width: 64, height: 64)
    }

    func testStandardSRGBProfilesAreNotTransformed() throws {
        for path in ["/usr/share/color/icc/sRGB.icc", "/usr/share/color/icc/colord/sRGB.icc",
                     "/usr/share/color/argyll/ref/sRGB.icm"] {
            let data = try profile(path)
            let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: data), layout: .rgba, management: .sRGB)
            XCTAssertNil(plan.transform, "\(path) is sRGB")
            let png = try chartPNG(profile: data)
            XCTAssertEqual(try ColorTestSupport.decode(png).firstFrame.buffer,
                           try ColorTestSupport.decode(png, .preserve).firstFrame.buffer, path)
        }
        for path in [ColorTestSupport.displayP3, ColorTestSupport.adobeRGB, ColorTestSupport.swappedRedGreen] {
            let plan = ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: try profile(path)), layout: .rgba, management: .sRGB)
            XCTAssertNotNil(plan.transform, "\(path) is not sRGB")
        }
    }

    /// Bad colour data never fails a decode: the image decodes as untagged, pixels identical to no profile.
    func testHostileProfilesDecodeAsUntagged() throws {
        let p3 = try profile(ColorTestSupport.displayP3)
        let grey = try profile("/usr/share/color/icc/Gray.icc")
        var v5 = p3
        v5[v5.startIndex + 8] = 5
        var truncated = p3.prefix(200)
        truncated[truncated.startIndex] = 0  // declared size no longer matches
        var noSignature = p3
        noSignature[noSignature.startIndex + 36] = 0x41
        var oversized = p3
        oversized.append(Data(count: LittleCMS.maxProfileBytes))
        var randomBytes = SplitMix64(seed: 30)
        var cases: [(String, Data)] = [
            ("empty", Data()), ("garbage", Data((0..<3000).map { _ in UInt8.random(in: 0...255, using: &randomBytes) })),
            ("ICC v5", v5), ("truncated", Data(truncated)), ("no acsp", noSignature), ("over 4 MiB", oversized),
            ("grey profile on RGB", grey),
        ]
        var tagsFlipped = p3
        for i in stride(from: 132, to: tagsFlipped.count, by: 7) { tagsFlipped[tagsFlipped.startIndex + i] ^= 0x5A }
        cases.append(("tags scrambled", tagsFlipped))
        let untagged = try ColorTestSupport.decode(chartPNG()).firstFrame.buffer
        for (name, bytes) in cases {
            for format in [ImageFormat.png, .jpeg, .webp] {
                let plain = try Image(buffer: ColorTestSupport.chart()).encoded(as: format, quality: 1, isLossless: true)
                let tagged = ICCEmbedding.embed(bytes, in: plain, format: format, width: 64, height: 64)
                let image: Image
                do { image = try ColorTestSupport.decode(tagged) } catch {
                    XCTFail("\(name) in \(format): the decode failed: \(error)")
                    continue
                }
                let reference = try ColorTestSupport.decode(plain).firstFrame.buffer
                if name == "tags scrambled" { continue }  // lcms may still read it: only "never fails" applies
                XCTAssertEqual(image.firstFrame.buffer, reference, "\(name) in \(format) decodes as untagged")
                if format == .png { XCTAssertEqual(image.firstFrame.buffer, untagged) }
            }
        }
    }

    /// A thousand images of one profile build one transform; the cache stays within its limits.
    func testTransformCacheReusesAndIsBounded() throws {
        let cache = ColorTransformCache(countLimit: 4, byteLimit: 1 << 20)
        let p3 = ImageColorSpace(iccProfile: try profile(ColorTestSupport.displayP3))
        let first = ColorStage.plan(colorSpace: p3, layout: .rgba, management: .sRGB, cache: cache).transform
        let second = ColorStage.plan(colorSpace: p3, layout: .rgba, management: .sRGB, cache: cache).transform
        XCTAssertNotNil(first)
        XCTAssertTrue(first === second, "the same profile gives the same transform")
        for i in 0..<20 {
            let gamma = ImageColorSpace(gamma: 0.3 + Double(i) / 100)
            XCTAssertNotNil(ColorStage.plan(colorSpace: gamma, layout: .rgba, management: .sRGB, cache: cache).transform)
            XCTAssertLessThanOrEqual(cache.count, 4)
        }
        // At the limit exactly, then one past: the least recently used goes.
        XCTAssertEqual(cache.count, 4)
        let small = ColorTransformCache(countLimit: 32, byteLimit: 600)
        let big = ImageColorSpace(iccProfile: try profile(ColorTestSupport.adobeRGB))
        _ = ColorStage.plan(colorSpace: big, layout: .rgba, management: .sRGB, cache: small)
        _ = ColorStage.plan(colorSpace: p3, layout: .rgba, management: .sRGB, cache: small)
        XCTAssertLessThanOrEqual(small.count, 1, "over the byte limit the older entry is evicted")
    }

    /// Many threads decoding tagged images at once share transforms and all get the same pixels.
    func testConcurrentDecodesAgree() throws {
        let data = try chartPNG(profile: profile(ColorTestSupport.displayP3))
        let expected = try ColorTestSupport.decode(data).firstFrame.buffer
        let results = Mutex<[PixelBuffer]>([])
        DispatchQueue.concurrentPerform(iterations: 32) { i in
            let options = DecodeOptions(pixelFormat: .rgba8, maxPixelSize: i % 2 == 0 ? nil : 64)
            if let buffer = try? ImageDecoder.decode(data, options: options).firstFrame.buffer {
                results.withLock { $0.append(buffer) }
            }
        }
        let all = results.withLock { $0 }
        XCTAssertEqual(all.count, 32)
        for buffer in all { XCTAssertEqual(buffer, expected) }
    }

    /// `.preserve` keeps pixels and profile, and the encoders write the profile back; sRGB pixels are written
    /// without one.
    func testPreserveRoundTripsTheProfileThroughEveryEncoder() throws {
        let p3 = try profile(ColorTestSupport.displayP3)
        let data = try chartPNG(profile: p3)
        let preserved = try ColorTestSupport.decode(data, .preserve)
        XCTAssertEqual(preserved.pixelICCProfile, p3)
        XCTAssertEqual(preserved.colorSpace?.iccProfile, p3)
        XCTAssertEqual(preserved.firstFrame.buffer, try ColorTestSupport.chart())
        let converted = try ColorTestSupport.decode(data)
        XCTAssertNil(converted.pixelICCProfile)
        XCTAssertNotEqual(converted.firstFrame.buffer, try ColorTestSupport.chart())
        for format in [ImageFormat.jpeg, .png, .webp] {
            let written = try preserved.encoded(as: format, quality: 1, isLossless: true)
            let again = try ColorTestSupport.decode(written, .preserve)
            XCTAssertEqual(again.colorSpace?.iccProfile, p3, "\(format) keeps the profile")
            let plain = try converted.encoded(as: format, quality: 1, isLossless: true)
            XCTAssertNil(try ColorTestSupport.decode(plain, .preserve).colorSpace, "\(format): sRGB pixels, no profile")
            // Decoding the written file to sRGB is the preserved decode of it through the profile's transform
            // (and for lossless formats, what the first sRGB decode gave).
            let roundTrip = try ColorTestSupport.decode(written)
            var expected = again.firstFrame.buffer
            ColorStage.plan(colorSpace: ImageColorSpace(iccProfile: p3), layout: .rgba, management: .sRGB).apply(to: &expected)
            XCTAssertEqual(roundTrip.firstFrame.buffer, expected, "\(format)")
            if format != .jpeg { XCTAssertEqual(roundTrip.firstFrame.buffer, converted.firstFrame.buffer, "\(format)") }
        }
    }

    /// An animated WebP with an ICCP chunk: every frame converted, the first, the lazily decoded and the preloaded
    /// ones, straight and premultiplied.
    func testAnimatedWebPFramesAreColourManaged() throws {
        let swapped = try profile(ColorTestSupport.swappedRedGreen)
        var red = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        var dark = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        for y in 0..<8 {
            for x in 0..<8 {
                red.setPixel(x: x, y: y, to: RGBA(r: 255, g: 0, b: 0))
                dark.setPixel(x: x, y: y, to: RGBA(r: 200, g: 10, b: 10, a: 200))
            }
        }
        let plain = try WebPEncoder.encodeAnimation([ImageFrame(buffer: red, duration: 0.1), ImageFrame(buffer: dark, duration: 0.1)],
                                                    loopCount: 0, options: EncodeOptions(isLossless: true))
        let tagged = ICCEmbedding.embed(swapped, in: plain, format: .webp, width: 8, height: 8)
        for format in [PixelBuffer.PixelFormat.rgba8, .rgba8Premultiplied] {
            for preload in [false, true] {
                let image = try ImageDecoder.decode(tagged, options: DecodeOptions(pixelFormat: format, preloadAllFrames: preload))
                XCTAssertEqual(image.frameCount, 2)
                XCTAssertEqual(image.colorSpace?.iccProfile, swapped)
                for index in 0..<2 {
                    let p = try image.frame(at: index).buffer.converted(to: .rgba8).pixel(x: 4, y: 4)
                    XCTAssertGreaterThan(Int(p.g), Int(p.r) + 80, "frame \(index) \(format) preload \(preload): \(p)")
                    XCTAssertEqual(p.a, index == 0 ? 255 : 200, "alpha untouched")
                }
                let raw = try ImageDecoder.decode(tagged, options: DecodeOptions(pixelFormat: format, colorManagement: .preserve))
                XCTAssertGreaterThan(Int(try raw.frame(at: 1).buffer.converted(to: .rgba8).pixel(x: 4, y: 4).r), 150)
            }
        }
    }

    /// An APNG with an iCCP chunk: every composited frame converted, preloaded or decoded later.
    func testAPNGFramesAreColourManaged() throws {
        let swapped = try profile(ColorTestSupport.swappedRedGreen)
        var red = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        var translucent = try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8)
        for y in 0..<8 {
            for x in 0..<8 {
                red.setPixel(x: x, y: y, to: RGBA(r: 255, g: 0, b: 0))
                translucent.setPixel(x: x, y: y, to: RGBA(r: 220, g: 0, b: 0, a: 255))
            }
        }
        let plain = try APNGEncoder.encode([ImageFrame(buffer: red, duration: 0.1), ImageFrame(buffer: translucent, duration: 0.1)],
                                           loopCount: 0, options: EncodeOptions())
        let tagged = ICCEmbedding.embed(swapped, in: plain, format: .png, width: 8, height: 8)
        for preload in [false, true] {
            let image = try ImageDecoder.decode(tagged, options: DecodeOptions(preloadAllFrames: preload))
            XCTAssertEqual(image.format, .apng)
            XCTAssertEqual(image.frameCount, 2)
            XCTAssertEqual(image.colorSpace?.iccProfile, swapped)
            for index in 0..<2 {
                let p = try image.frame(at: index).buffer.converted(to: .rgba8).pixel(x: 4, y: 4)
                XCTAssertGreaterThan(Int(p.g), Int(p.r) + 80, "frame \(index) preload \(preload): \(p)")
            }
        }
    }

    /// `.target`: untagged pixels are converted into the target, which the image then carries.
    func testTargetProfileConvertsAndTravelsWithThePixels() throws {
        let adobe = try profile(ColorTestSupport.adobeRGB)
        let png = try chartPNG()
        let image = try ColorTestSupport.decode(png, .target(adobe))
        XCTAssertEqual(image.pixelICCProfile, adobe)
        XCTAssertNotEqual(image.firstFrame.buffer, try ColorTestSupport.chart())
        let back = try ColorTestSupport.decode(image.encoded(as: .png))
        if let stats = ColorTestSupport.compare(back.firstFrame.buffer, try ColorTestSupport.chart()) {
            XCTAssertLessThanOrEqual(stats.mean, 1.0, "\(stats)")
        }
        // An sRGB or unusable target is the default.
        let srgbTarget = try ColorTestSupport.decode(png, .target(profile("/usr/share/color/icc/sRGB.icc")))
        XCTAssertNil(srgbTarget.pixelICCProfile)
        XCTAssertEqual(srgbTarget.firstFrame.buffer, try ColorTestSupport.chart())
        XCTAssertEqual(try ColorTestSupport.decode(png, .target(Data([1, 2, 3]))).firstFrame.buffer, try ColorTestSupport.chart())
    }
}
