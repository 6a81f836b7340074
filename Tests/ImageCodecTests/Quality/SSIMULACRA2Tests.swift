@testable import ImageCodec
import Foundation
import TestSupport
import XCTest

/// Our SSIMULACRA2 against the published metric's PyPI port on real photographs and real codec output, and its
/// edge cases.
final class SSIMULACRA2Tests: XCTestCase {
    func testIdenticalImagesScore100() throws {
        let url = try XCTUnwrap(QualityCorpus.photos().first)
        let image = try QualityCorpus.thumbnail(url, maxPixelSize: 128)
        XCTAssertEqual(try SSIMULACRA2.score(reference: image, distorted: image), 100, accuracy: 1e-9)
    }

    /// Given corpus thumbnails and JPEG and WebP encodes of them at low to high qualities, when both our metric and
    /// the PyPI reference score them, then they agree within 0.5 points (Float against float64 arithmetic).
    func testAgreesWithTheReferenceImplementation() throws {
        let tool = try QualityCorpus.referenceTool()
        let folder = try QualityCorpus.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photos = try QualityCorpus.photos()
        // Photographs, a screenshot, a diagram, a grey image, one with alpha: a spread, not all 67 (the tool is slow).
        let picked = photos.enumerated().filter { $0.offset % 9 == 0 }.map(\.element)
        var worst = 0.0
        for url in picked {
            let source = try QualityCorpus.thumbnail(url, maxPixelSize: 256)
            for (format, quality) in [(ImageFormat.jpeg, 0.3), (.jpeg, 0.85), (.webp, 0.6)] {
                let encoded = try ImageEncoder.encodeBuiltIn([ImageFrame(buffer: source)], format: format, loopCount: 0,
                                                            options: EncodeOptions(quality: quality))
                let decoded = try ImageDecoder.decode(encoded).firstFrame.buffer
                // The reference tool drops alpha; compare opaque pixels (composited the way ours does).
                let (a, b) = (try Self.opaque(source), try Self.opaque(decoded))
                let ours = try SSIMULACRA2.score(reference: a, distorted: b)
                let theirs = try QualityCorpus.referenceScore(a, b, tool: tool, folder: folder)
                worst = max(worst, abs(ours - theirs))
                XCTAssertEqual(ours, theirs, accuracy: 0.5, "\(url.lastPathComponent) \(format) q\(quality)")
            }
        }
        print("SSIMULACRA2: largest difference from the PyPI reference: \(worst)")
    }

    /// Lower quality never scores higher on the same image (the search relies on it, up to noise).
    func testScoreFallsWithQuality() throws {
        let url = try XCTUnwrap(QualityCorpus.photos().first { $0.lastPathComponent.hasPrefix("kodak") })
        let source = try QualityCorpus.thumbnail(url, maxPixelSize: 200)
        let reference = SSIMULACRA2.Reference(source)
        var previous = 101.0
        for quality in [0.95, 0.8, 0.6, 0.4, 0.2, 0.05] {
            let data = try JPEGEncoder.encode(source, options: EncodeOptions(quality: quality))
            let score = try reference.score(ImageDecoder.decode(data).firstFrame.buffer)
            XCTAssertLessThan(score, previous, "q\(quality)")
            previous = score
        }
        XCTAssertLessThan(previous, 40)
    }

    func testSizeMismatchThrows() throws {
        let a = try PixelBuffer(width: 16, height: 16), b = try PixelBuffer(width: 16, height: 17)
        XCTAssertThrowsError(try SSIMULACRA2.score(reference: a, distorted: b))
    }

    /// 1×1 and 7×7 have no scale to compare (under 8 pixels a side): identical or not, no crash, 100.
    /// 8×8 and 9×13 have one: a different image scores below 100.
    func testTinyAndOddSizes() throws {
        for (w, h) in [(1, 1), (7, 7), (1, 300)] {
            let a = try PixelBuffer(width: w, height: h)
            let b = try Patterns.checkerboard(width: w, height: h)
            XCTAssertEqual(try SSIMULACRA2.score(reference: a, distorted: b), 100, "\(w)×\(h)")
        }
        for (w, h) in [(8, 8), (9, 13), (300, 9)] {
            let a = try Patterns.solid(width: w, height: h, RGBA(r: 128, g: 128, b: 128))
            let b = try Patterns.checkerboard(width: w, height: h)
            let score = try SSIMULACRA2.score(reference: a, distorted: b)
            XCTAssertTrue(score.isFinite)
            XCTAssertLessThan(score, 90, "\(w)×\(h)")
        }
    }

    /// A transparent image: pixels are composited on grey, so colour under alpha 0 does not count.
    func testColourUnderFullTransparencyIsIgnored() throws {
        let a = try Patterns.make(width: 32, height: 32, format: .rgba8) { x, _ in RGBA(r: 255, g: 0, b: 0, a: x < 16 ? 0 : 255) }
        let b = try Patterns.make(width: 32, height: 32, format: .rgba8) { x, _ in
            x < 16 ? RGBA(r: 0, g: 0, b: 255, a: 0) : RGBA(r: 255, g: 0, b: 0, a: 255)
        }
        XCTAssertEqual(try SSIMULACRA2.score(reference: a, distorted: b), 100, accuracy: 1e-9)
    }

    /// The metric's scratch is reused across comparisons (a `Reference` keeps it): scoring the same image again,
    /// after a different one, gives the bit-identical score; and many threads scoring against one reference at
    /// once get exactly the serial scores (each comparison takes its own workspace).
    func testReusedAndConcurrentComparisonsGiveTheSameScores() throws {
        let url = try XCTUnwrap(QualityCorpus.photos().first { $0.lastPathComponent.hasPrefix("kodak") })
        let source = try QualityCorpus.thumbnail(url, maxPixelSize: 160)
        let distorted = try [0.2, 0.5, 0.9].map { q in
            try ImageDecoder.decode(try JPEGEncoder.encode(source, options: EncodeOptions(quality: q))).firstFrame.buffer
        }
        let reference = SSIMULACRA2.Reference(source)
        let serial = try distorted.map { try reference.score($0) }
        XCTAssertEqual(try reference.score(distorted[0]), serial[0])
        XCTAssertEqual(try SSIMULACRA2.score(reference: source, distorted: distorted[2]), serial[2])
        let results = Mutex([Int: Double]())
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            let score = (try? reference.score(distorted[i % 3])) ?? .nan
            results.withLock { $0[i] = score }
        }
        results.withLock { r in
            for i in 0..<12 { XCTAssertEqual(r[i], serial[i % 3], "comparison \(i)") }
        }
        XCTAssertEqual(serial.sorted(), serial, "lower quality scores lower")
    }

    /// The metric's cube root (a bit estimate and two Halley steps, no libm call) is within 3 ulps of
    /// Foundation's over the range XYB uses (the bias 0.0038 up to 1.01) and beyond.
    func testFastCubeRootMatchesFoundation() {
        var v: Float = 0.0037930732552754493
        var worst: Float = 0
        while v < 8 {
            let exact = Float(Foundation.cbrt(Double(v)))
            let fast = SSIMULACRA2.Kernels.cbrt(v)
            worst = max(worst, abs(fast - exact) / exact.ulp)
            v = v * 1.0009 + 1e-7
        }
        XCTAssertLessThanOrEqual(worst, 3, "worst error in ulps")
        XCTAssertEqual(SSIMULACRA2.Kernels.cbrt(0), 0)
    }

    /// Halving in place keeps the edge rule (a block cut by the edge averages the pixels it has) on odd sizes.
    func testHalvingInPlaceOnOddSizes() {
        for (w, h) in [(1, 1), (3, 1), (1, 3), (5, 3), (4, 4), (7, 9)] {
            var plane = (0..<(w * h)).map { Float($0 * $0 % 17) }
            let original = plane
            plane.withUnsafeMutableBufferPointer { SSIMULACRA2.Kernels.halve($0.baseAddress!, width: w, height: h) }
            let (w2, h2) = ((w + 1) / 2, (h + 1) / 2)
            for oy in 0..<h2 {
                for ox in 0..<w2 {
                    var sum: Float = 0, count: Float = 0
                    for y in (2 * oy)...min(2 * oy + 1, h - 1) {
                        for x in (2 * ox)...min(2 * ox + 1, w - 1) {
                            sum += original[y * w + x]
                            count += 1
                        }
                    }
                    XCTAssertEqual(plane[oy * w2 + ox], sum / count, accuracy: 1e-5, "\(w)×\(h) at \(ox),\(oy)")
                }
            }
        }
    }

    static func opaque(_ buffer: PixelBuffer) throws -> PixelBuffer { try OpaqueComposite.onMidGrey(buffer) }
}
