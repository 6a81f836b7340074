import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// A fixed subset of the thumbor compatibility table (scripts/thumbor-compat/run.py), against our server only:
/// each URL must get the status thumbor 7.8 answered and, for a 2xx, its format and size (recorded from thumbor's
/// run in `ThumborCompatRecorded`). The images are the corpus's (skipped with a message without it).
final class ThumborCompatTests: XCTestCase {
    func testRecordedThumborAnswers() async throws {
        let corpus: URL
        do { corpus = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        XCTAssertGreaterThanOrEqual(ThumborCompatRecorded.expectations.count, 25)
        let harness = try await ServerHarness()
        for (name, path) in ThumborCompatRecorded.images {
            let data = try Data(contentsOf: corpus.appendingPathComponent(path))
            harness.origin.route("/\(name)", .bytes(Array(data), contentType: "application/octet-stream"))
        }
        harness.origin.route("/README.txt", .bytes(Array("not an image\n".utf8), contentType: "text/plain"))
        // The uniform image the script makes with PIL, made here as PNG (lossless: the same pixels).
        let uniform = ThumborCompatRecorded.uniform
        var flat = try PixelBuffer(width: uniform.width, height: uniform.height, pixelFormat: .rgba8)
        let colour = RGBA(r: UInt8(uniform.rgb.0), g: UInt8(uniform.rgb.1), b: UInt8(uniform.rgb.2))
        for y in 0..<uniform.height { for x in 0..<uniform.width { flat.setPixel(x: x, y: y, to: colour) } }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(flat)
        harness.origin.route("/\(uniform.name)", .bytes(Array(try encoder.encode()), contentType: "image/png"))
        let origin = "127.0.0.1:\(harness.origin.url("/").port!)"
        for expected in ThumborCompatRecorded.expectations {
            let path = expected.path.replacingOccurrences(of: "{o}", with: origin)
            let reply = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)\(path)")!, timeout: 120)
            XCTAssertEqual(reply.status, expected.status, expected.path)
            guard expected.status == 200, reply.status == 200 else { continue }
            let image = try ImageDecoder.decode(reply.body)
            XCTAssertEqual(image.format.rawValue, expected.format, expected.path)
            XCTAssertEqual([image.width, image.height], [expected.width, expected.height], expected.path)
            XCTAssertEqual(image.frameCount, expected.frames, "\(expected.path): thumbor keeps an animated GIF's frames")
        }
        await harness.stop()
    }
}
