import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// The service outputs sRGB for every format and source: tagged sources (a profile that swaps red and green,
/// Display P3, a CMYK JPEG with its SWOP profile) come out converted, with no profile and no EXIF that could
/// contradict the pixels.
final class ImageServerColorTests: XCTestCase {
    var harness: ServerHarness!
    private let swapped = "/usr/share/color/icc/colord/SwappedRedAndGreen.icc"
    private let p3 = "/usr/share/color/argyll/ref/DisplayP3.icm"

    override func setUp() async throws {
        harness = try await ServerHarness()
    }

    override func tearDown() async throws {
        await harness?.stop()
    }

    /// A 48 × 32 chart (red left half, a colour ramp right) tagged with `profile`, as PNG.
    private func taggedChart(_ profile: Data) throws -> Data {
        var buffer = try PixelBuffer(width: 48, height: 32, pixelFormat: .rgba8)
        for y in 0..<32 {
            for x in 0..<48 {
                buffer.setPixel(x: x, y: y, to: x < 24 ? RGBA(r: 255, g: 0, b: 0) : RGBA(r: UInt8(x * 5), g: UInt8(y * 7), b: 160))
            }
        }
        let image = Image(frames: [ImageFrame(buffer: buffer)], format: .unknown, loopCount: 1, hasAlpha: false,
                          pixelICCProfile: profile)
        return try image.encoded(as: .png)
    }

    /// No ICC profile (JPEG APP2, PNG iCCP, WebP ICCP) and no EXIF in an output.
    private func assertUntagged(_ body: Data, _ label: String) {
        for marker in ["ICC_PROFILE", "iCCP", "ICCP", "Exif"] {
            XCTAssertNil(body.range(of: Data(marker.utf8)), "\(label): the output carries \(marker)")
        }
        XCTAssertNil(try? ImageDecoder.decode(body, options: DecodeOptions(colorManagement: .preserve)).colorSpace ?? nil,
                     "\(label): the output says something about its colours")
    }

    func testTaggedSourcesComeOutAsUntaggedSRGBInEveryFormat() async throws {
        guard let swappedProfile = FileManager.default.contents(atPath: swapped),
              let p3Profile = FileManager.default.contents(atPath: p3) else {
            throw XCTSkip("Debian's ICC profiles missing (make test-deps)")
        }
        harness.origin.route("/swapped.png", .bytes(try taggedChart(swappedProfile), contentType: "image/png"))
        let p3Source = try taggedChart(p3Profile)
        harness.origin.route("/p3.png", .bytes(p3Source, contentType: "image/png"))
        var sources = [("/swapped.png", "swapped"), ("/p3.png", "p3")]
        if let corpus = Corpus.directory,
           let cmyk = FileManager.default.contents(atPath: corpus.appendingPathComponent("color/jpeg/thumbor_cmyk-icc.jpg").path) {
            harness.origin.route("/cmyk.jpg", .bytes(cmyk, contentType: "image/jpeg"))
            sources.append(("/cmyk.jpg", "cmyk"))
        }
        for (path, name) in sources {
            for format in ["jpeg", "png", "webp"] {
                let reply = await harness.image([("url", harness.source(path)), ("format", format), ("w", "48")])
                let label = "\(name) → \(format)"
                XCTAssertEqual(reply.status, 200, label)
                assertUntagged(reply.body, label)
                let image = try reply.decoded().firstFrame.buffer.converted(to: .rgba8)
                switch name {
                case "swapped":
                    let p = image.pixel(x: 6, y: 16)
                    XCTAssertGreaterThan(Int(p.g), Int(p.r) + 100, "\(label): red through SwappedRedAndGreen is green, got \(p)")
                case "p3":
                    let expected = try ImageDecoder.decode(p3Source, options: DecodeOptions(pixelFormat: .rgba8)).firstFrame.buffer
                    let raw = try ImageDecoder.decode(p3Source, options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve))
                        .firstFrame.buffer
                    guard let stats = ColorDifference.stats(image, expected), let before = ColorDifference.stats(image, raw) else {
                        XCTFail("\(label): size"); continue
                    }
                    XCTAssertLessThan(stats.mean, before.mean, "\(label): converted \(stats), raw \(before)")
                    if format == "png" { XCTAssertLessThanOrEqual(stats.mean, 0.5, "\(label): \(stats)") }
                default:
                    // CMYK through its SWOP profile: not the profile-less formula's pixels.
                    XCTAssertGreaterThan(image.width, 0, label)
                }
            }
        }
    }
}
