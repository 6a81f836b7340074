import Foundation
@testable import ImageCodec
import TestSupport
import XCTest

/// `resized(width:height:filter:)` against `ResizeReference`, the resize path as written before its box loops
/// moved to C, on a photograph and on worst cases for block sums (1-pixel lines, noise, straight alpha), at the
/// ratios where the box prefilter splits the shrink differently.
final class ProcessingResizeReferencePathTests: XCTestCase {
    /// 2× and 5× (no box prefilter), 10× (2-pixel blocks, the benchmark's ratio), 13.7× (3-pixel blocks), and an
    /// odd size with a different ratio on each axis.
    private func sizes(width: Int, height: Int) -> [(Int, Int)] {
        [2.0, 5, 10, 13.7].map { (max(1, Int((Double(width) / $0).rounded())), max(1, Int((Double(height) / $0).rounded()))) }
            + [(width / 9 | 1, height / 17 | 1)]
    }

    private func assertMatchesReference(_ source: PixelBuffer, _ name: String, filters: [ResamplingFilter],
                                        file: StaticString = #filePath, line: UInt = #line) throws {
        for filter in filters {
            for (width, height) in sizes(width: source.width, height: source.height) {
                let message = "\(name) \(source.width)×\(source.height) → \(width)×\(height) \(filter)"
                let expected = try ResizeReference.resized(source, width: width, height: height, filter: filter)
                ResizeReference.assertMatches(try source.resized(width: width, height: height, filter: filter), expected,
                                              message, file: file, line: line)
            }
        }
    }

    /// `buffer` in straight alpha with alpha from `alpha(x, y)` (colour kept where it was).
    private func withAlpha(_ buffer: PixelBuffer, _ alpha: (Int, Int) -> UInt8) -> PixelBuffer {
        var straight = buffer.converted(to: .rgba8)
        for y in 0..<straight.height {
            for x in 0..<straight.width {
                var p = straight.pixel(x: x, y: y)
                p.a = alpha(x, y)
                straight.setPixel(x: x, y: y, to: p)
            }
        }
        return straight
    }

    func testACorpusPhotoMatchesTheReferencePath() throws {
        let corpus: URL
        do { corpus = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let url = corpus.appendingPathComponent("photos/kodak_05.png")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("photos/kodak_05.png is not in the corpus at \(corpus.path)")
        }
        let photo = try ImageDecoder.decode(try Data(contentsOf: url)).firstFrame.buffer
        try assertMatchesReference(photo, "kodak_05", filters: [.lanczos3, .triangle])
        // An odd-sized crop, in straight alpha with a translucent ramp and a transparent band.
        let odd = try photo.cropped(x: 3, y: 1, width: 761, height: 509)
        let translucent = withAlpha(odd) { x, y in (y / 7) % 9 == 0 ? 0 : UInt8(40 + (x * 215) / 760) }
        try assertMatchesReference(translucent, "kodak_05 crop, straight alpha", filters: [.lanczos3])
    }

    func testWorstCasePatternsMatchTheReferencePath() throws {
        let (width, height) = (411, 307)
        // 1-pixel lines: every other column white, every third row white.
        let lines = try Patterns.make(width: width, height: height) { x, y in
            x % 2 == 0 || y % 3 == 0 ? RGBA(r: 255, g: 255, b: 255) : RGBA(r: 0, g: 0, b: 0)
        }
        try assertMatchesReference(lines, "1-pixel lines", filters: [.lanczos3, .triangle, .mitchell])
        // Opaque and transparent 1-pixel columns, the transparent ones red (colour that must not bleed).
        let alphaLines = try Patterns.make(width: width, height: height, format: .rgba8) { x, y in
            x % 2 == 0 ? RGBA(r: 255, g: 0, b: 0, a: 0) : RGBA(r: 0, g: UInt8((y * 255) / (height - 1)), b: 255, a: 255)
        }
        try assertMatchesReference(alphaLines, "transparent 1-pixel columns", filters: [.lanczos3])
        // Full-range noise with random alpha, premultiplied and straight.
        var state: UInt64 = 12_345
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let noise = try Patterns.make(width: width, height: height, format: .rgba8) { _, _ in
            RGBA(r: next(), g: next(), b: next(), a: next())
        }
        try assertMatchesReference(noise, "straight noise", filters: [.lanczos3])
        try assertMatchesReference(noise.converted(to: .rgba8Premultiplied), "premultiplied noise", filters: [.lanczos3, .triangle])
    }
}
