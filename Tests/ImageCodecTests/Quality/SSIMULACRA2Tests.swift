@testable import ImageCodec
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

    static func opaque(_ buffer: PixelBuffer) throws -> PixelBuffer { try OpaqueComposite.onMidGrey(buffer) }
}
