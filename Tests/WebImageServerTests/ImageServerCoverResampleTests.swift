import Foundation
import ImageCodec
import TestSupport
@testable import WebImageServerCore
import XCTest

/// A `cover` render resamples its window exactly once: the same pixels as one Lanczos3 of the window, computed here
/// in Double, on sharp text-like edges. Decoding downsampled first (an exact Lanczos3 to twice the output's scale,
/// then the window's Lanczos3, clamped to 8 bits in between) was up to 29 levels off at text edges (a 1400 × 720
/// chart into 400 × 300: SSIMULACRA2 87.3 against the single resample, scripts/quality/resize_quality.py).
final class ImageServerCoverResampleTests: XCTestCase {
    var harness: ServerHarness!

    override func setUp() async throws {
        harness = try await ServerHarness()
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// Light "glyphs" (1–3 px strokes, a few grey levels) on a dark background, opaque: a dark-theme chart's text.
    static func textLike(width: Int, height: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for y in 0..<height {
            for x in 0..<width { buffer.setPixel(x: x, y: y, to: RGBA(r: 17, g: 19, b: 24, a: 255)) }
        }
        // Glyph cells of 9 × 14 px in lines 22 px apart: strokes at random places inside each cell.
        for lineTop in stride(from: 4, to: height - 16, by: 22) {
            for cell in stride(from: 4, to: width - 10, by: 9) where next() % 5 != 0 {
                let level = UInt8(150 + next() % 100)
                let ink = RGBA(r: level, g: level, b: UInt8(min(255, Int(level) + 10)), a: 255)
                for _ in 0..<3 {
                    let thickness = 1 + next() % 3
                    if next() % 2 == 0 {
                        let x0 = cell + next() % 7
                        for y in lineTop..<(lineTop + 14) {
                            for x in x0..<min(x0 + thickness, cell + 8) { buffer.setPixel(x: x, y: y, to: ink) }
                        }
                    } else {
                        let y0 = lineTop + next() % 12
                        for y in y0..<min(y0 + thickness, lineTop + 14) {
                            for x in cell..<(cell + 8) { buffer.setPixel(x: x, y: y, to: ink) }
                        }
                    }
                }
            }
        }
        return buffer
    }

    /// Lanczos3 weights of one axis for the window `origin ..< origin + span` of `count` samples into `destination`
    /// (pixel centres at half-integers, support widened by the shrink; only the samples the window touches).
    static func weights(count: Int, origin: Double, span: Double, destination: Int) -> [(first: Int, weights: [Double])] {
        func lanczos3(_ x: Double) -> Double {
            let t = abs(x)
            if t < 1e-12 { return 1 }
            if t >= 3 { return 0 }
            return 3 * sin(Double.pi * t) * sin(Double.pi * t / 3) / (Double.pi * Double.pi * t * t)
        }
        let scale = span / Double(destination), filterScale = max(scale, 1), support = 3 * filterScale
        let low = Int(floor(origin + 1e-9)), high = min(count, Int(ceil(origin + span - 1e-9)))
        return (0..<destination).map { i in
            let centre = origin + (Double(i) + 0.5) * scale
            let first = max(low, Int(floor(centre - support))), last = min(high - 1, Int(ceil(centre + support)))
            var w = (first...last).map { lanczos3((Double($0) + 0.5 - centre) / filterScale) }
            let sum = w.reduce(0, +)
            w = w.map { $0 / sum }
            return (first, w)
        }
    }

    /// One separable Lanczos3 of the window of `source` (opaque) into `width × height`, in Double, rounded once.
    static func reference(_ source: PixelBuffer, x: Double, y: Double, spanX: Double, spanY: Double,
                          width: Int, height: Int) -> [[SIMD3<Double>]] {
        let wx = weights(count: source.width, origin: x, span: spanX, destination: width)
        let wy = weights(count: source.height, origin: y, span: spanY, destination: height)
        var rows = [[SIMD3<Double>]](repeating: [], count: source.height)
        func row(_ j: Int) -> [SIMD3<Double>] {
            if rows[j].isEmpty {
                rows[j] = (0..<source.width).map { i in
                    let p = source.pixel(x: i, y: j)
                    return SIMD3(Double(p.r), Double(p.g), Double(p.b))
                }
            }
            return rows[j]
        }
        return (0..<height).map { oy in
            var column = [SIMD3<Double>](repeating: .zero, count: source.width)
            for (k, w) in wy[oy].weights.enumerated() {
                let r = row(wy[oy].first + k)
                for i in 0..<source.width { column[i] += w * r[i] }
            }
            return (0..<width).map { ox in
                var sum = SIMD3<Double>.zero
                for (k, w) in wx[ox].weights.enumerated() { sum += w * column[wx[ox].first + k] }
                return (sum.rounded(.toNearestOrAwayFromZero)).clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 255))
            }
        }
    }

    /// The largest and the mean absolute difference of `image` from `reference`, over R, G and B.
    static func error(_ image: PixelBuffer, _ reference: [[SIMD3<Double>]]) -> (max: Double, mean: Double) {
        var most = 0.0, total = 0.0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x: x, y: y)
                let r = reference[y][x]
                for d in [abs(Double(p.r) - r.x), abs(Double(p.g) - r.y), abs(Double(p.b) - r.z)] {
                    most = max(most, d)
                    total += d
                }
            }
        }
        return (most, total / Double(image.width * image.height * 3))
    }

    /// How many pixels of `image` differ from `expected` (the same size).
    static func differingPixels(_ image: PixelBuffer, _ expected: PixelBuffer) -> Int {
        var differing = 0
        for y in 0..<image.height {
            for x in 0..<image.width where image.pixel(x: x, y: y) != expected.pixel(x: x, y: y) { differing += 1 }
        }
        return differing
    }

    private func render(_ path: String) async throws -> PixelBuffer {
        let reply = await harness.image([("url", harness.source(path)), ("w", "400"), ("h", "300"), ("fit", "cover"),
                                         ("format", "png")])
        let image = try reply.decoded()
        XCTAssertEqual([image.width, image.height], [400, 300])
        return image.firstFrame.buffer
    }

    /// A 1400 × 720 PNG into 400 × 300: the 960 × 720 window at x = 220 shrinks by 2.4. It used to be decoded at
    /// 1168 px (an exact Lanczos3 1.2× shrink) and resampled again: max 20+ levels off.
    func testPNGCoverIsOneLanczos3OfTheWindow() async throws {
        let source = try Self.textLike(width: 1400, height: 720)
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(source)
        harness.origin.route("/text.png", .bytes(Array(try encoder.encode()), contentType: "image/png"))
        let image = try await render("/text.png")
        let reference = Self.reference(source, x: 220, y: 0, spanX: 960, spanY: 720, width: 400, height: 300)
        let (most, mean) = Self.error(image, reference)
        XCTAssertLessThanOrEqual(most, 1, "mean \(mean)")
        XCTAssertLessThan(mean, 0.05, "max \(most)")
    }

    /// A 4811 × 2601 JPEG into 400 × 300: the 3468 × 2601 window at x = 671 shrinks by 8.67 (555 px at the output's
    /// scale). The decode is DCT-scaled only, at least 2× the output (1/4: 1203 × 651, for 1202.75 × 650.25 of
    /// picture; `DecodeOptions.resizesToFit` false, asked for 555 px), and the window, at x = 167.75 of it, resampled
    /// once. It used to be resized to twice the output's scale in the decoder first (a second Lanczos3).
    func testJPEGCoverIsOneLanczos3OfTheWindowOfTheDCTScaledDecode() async throws {
        let source = try Self.textLike(width: 4811, height: 2601)
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.95))
        encoder.addFrame(source)
        let jpeg = try encoder.encode()
        harness.origin.route("/text.jpg", .bytes(Array(jpeg), contentType: "image/jpeg"))
        let scaled = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: 555, resizesToFit: false))
        XCTAssertEqual([scaled.width, scaled.height], [1203, 651], "DCT scaling by 1/4 only")
        let exact = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: 555))
        XCTAssertEqual([exact.width, exact.height], [555, 300], "resizesToFit's default resizes exactly")
        let image = try await render("/text.jpg")
        // Exactly the library's one resample of that window (a 2.17× shrink by Lanczos3, the single resize's own method).
        let once = try scaled.firstFrame.buffer.resized(width: 400, height: 300, fromX: 167.75, y: 0, sourceWidth: 867,
                                                        sourceHeight: 650.25)
        XCTAssertEqual(Self.differingPixels(image, once), 0, "pixels differing from one resample of the DCT-scaled decode")
    }

    /// The same JPEG under every EXIF orientation: the DCT-scaled decode's last stored row and column are partly
    /// padding (4811 and 2601 are not multiples of 2 or 4), and an orientation that reverses an axis puts that pixel
    /// first, so the window starts that much further in. The output is exactly one resample of the oriented decode's
    /// window there (before the fix, up to 0.75 decoded pixels off on the reversed axes).
    func testOrientedJPEGCoverMapsTheWindowPastThePadding() async throws {
        let source = try Self.textLike(width: 4811, height: 2601)
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.95))
        encoder.addFrame(source)
        let jpeg = try encoder.encode()
        for orientation in ImageOrientation.allCases {
            let path = "/text-\(orientation.rawValue).jpg"
            harness.origin.route(path, .bytes(TestImages.withEXIFOrientation(Array(jpeg), orientation: UInt16(orientation.rawValue)),
                                              contentType: "image/jpeg"))
            let image = try await render(path)
            // The oriented picture: 4811 × 2601 or 2601 × 4811; the decode the server asks for (the output's scale).
            let (w, h) = orientation.swapsDimensions ? (2601.0, 4811.0) : (4811.0, 2601.0)
            let scale = max(400 / w, 300 / h)
            let stored = try ImageDecoder.decode(jpeg, options: DecodeOptions(maxPixelSize: Int((max(w, h) * scale).rounded(.up)),
                                                                              resizesToFit: false)).firstFrame.buffer
            let d = Int((4811 / Double(stored.width)).rounded())
            XCTAssertTrue([2, 4].contains(d), "\(orientation): DCT 1/\(d)")
            XCTAssertEqual([stored.width, stored.height], [(4811 + d - 1) / d, (2601 + d - 1) / d])
            // Padding of the stored axes, in decoded pixels; which oriented axes run against the stored ones.
            let padStoredX = Double((4811 + d - 1) / d * d - 4811) / Double(d)
            let padStoredY = Double((2601 + d - 1) / d * d - 2601) / Double(d)
            let reversesX = [ImageOrientation.upMirrored, .down, .right, .rightMirrored].contains(orientation)
            let reversesY = [ImageOrientation.down, .downMirrored, .rightMirrored, .left].contains(orientation)
            let (padX, padY) = orientation.swapsDimensions ? (padStoredY, padStoredX) : (padStoredX, padStoredY)
            let origin = ImageService.shrunkPictureOrigin(factor: d, orientedWidth: Int(w), orientedHeight: Int(h),
                                                          orientation: orientation)
            XCTAssertEqual(origin.x, reversesX ? padX : 0, "\(orientation)")
            XCTAssertEqual(origin.y, reversesY ? padY : 0, "\(orientation)")
            // The 4:3 window placed as thumbor's `auto_crop` places it (a width rounded up, a height half to even,
            // the origin from the floored centre half to even), in decoded pixels.
            let (windowWidth, windowHeight) = w / h > 4.0 / 3 ? ((h * 4 / 3).rounded(.up), h)
                : (w, (w * 3 / 4).rounded(.toNearestOrEven))
            let left = ((w / 2).rounded(.down) - windowWidth / 2).rounded(.toNearestOrEven)
            let top = ((h / 2).rounded(.down) - windowHeight / 2).rounded(.toNearestOrEven)
            let f = Double(d)
            let once = try stored.applyingOrientation(orientation)
                .resized(width: 400, height: 300, fromX: left / f + (reversesX ? padX : 0), y: top / f + (reversesY ? padY : 0),
                         sourceWidth: windowWidth / f, sourceHeight: windowHeight / f)
            XCTAssertEqual(Self.differingPixels(image, once), 0, "\(orientation): pixels differing from one resample of the oriented window")
        }
    }

    /// A 3300 × 2480 PNG into 400 × 300: the 3300 × 2475 window shrinks by 8.25 (400 px at the output's scale). The
    /// decode averages 2 × 2 blocks only (1650 × 1240, at least 4× the output; `PNGDecoder.shrinkOnLoadFactor`,
    /// `DecodeOptions.resizesToFit` false) and the window, at y = 1 of it, is resampled once. It used to be resized
    /// to 800 px in the decoder first (a Lanczos3, clamped to 8 bits, then the window's).
    func testLargePNGCoverIsOneResampleOfItsBlockAverages() async throws {
        let source = try Self.textLike(width: 3300, height: 2480)
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(source)
        let png = try encoder.encode()
        harness.origin.route("/large.png", .bytes(Array(png), contentType: "image/png"))
        XCTAssertEqual(PNGDecoder.shrinkOnLoadFactor(width: 3300, height: 2480, maxPixelSize: 800), 2)
        let blocks = try ImageDecoder.decode(png, options: DecodeOptions(maxPixelSize: 800, resizesToFit: false))
        XCTAssertEqual([blocks.width, blocks.height], [1650, 1240], "2 × 2 block averages only")
        // The block averages are exactly `RowResampler`'s box stage: the same pixels as averaging the source here.
        for (x, y) in [(0, 0), (700, 311), (1649, 1239), (1234, 77)] {
            var sum = SIMD4<Int>.zero
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let p = source.pixel(x: 2 * x + dx, y: 2 * y + dy)
                sum &+= SIMD4(Int(p.r), Int(p.g), Int(p.b), Int(p.a))
            }
            let p = blocks.firstFrame.buffer.pixel(x: x, y: y)
            XCTAssertEqual(SIMD4(Int(p.r), Int(p.g), Int(p.b), Int(p.a)), (sum &+ 2) / 4, "block (\(x), \(y))")
        }
        let exact = try ImageDecoder.decode(png, options: DecodeOptions(maxPixelSize: 800))
        XCTAssertEqual([exact.width, exact.height], [800, 601], "resizesToFit's default resizes exactly")
        let image = try await render("/large.png")
        let once = try blocks.firstFrame.buffer.resized(width: 400, height: 300, fromX: 0, y: 1, sourceWidth: 1650,
                                                        sourceHeight: 1237.5)
        XCTAssertEqual(Self.differingPixels(image, once), 0, "pixels differing from one resample of the block averages")
    }
}
