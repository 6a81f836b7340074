import Foundation
import ImageCodec
import TestSupport
import XCTest

/// `webimage convert IN OUT --thumbnail N` through the built binary.
final class CLIThumbnailTests: XCTestCase {
    private func webimage(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        do {
            let run = try WebImageCLI.run(arguments)
            return (run.status, run.stderr)
        } catch let notBuilt as WebImageCLI.NotBuilt {
            throw XCTSkip(notBuilt.description)
        }
    }

    private func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(UUID().uuidString)-\(name)")
    }

    private func remove(_ urls: [URL]) {
        for url in urls where FileManager.default.fileExists(atPath: url.path) {
            do { try FileManager.default.removeItem(at: url) } catch { XCTFail("cannot remove \(url.path): \(error)") }
        }
    }

    func testThumbnailWritesADownsampledImage() throws {
        let input = temporaryURL("big.jpg")
        let output = temporaryURL("thumb.png")
        defer { remove([input, output]) }
        let data = try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 1200, height: 800), as: .jpeg)
        try data.write(to: input)
        let run = try webimage(["convert", input.path, output.path, "--thumbnail", "300"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let thumbnail = try ImageDecoder.decode(try Data(contentsOf: output))
        XCTAssertEqual(thumbnail.format, .png)
        XCTAssertEqual(thumbnail.width, 300)
        XCTAssertEqual(thumbnail.height, 200)
        let expected = try ImageDecoder.decode(data).firstFrame.buffer.resized(width: 300, height: 200)
        XCTAssertGreaterThan(ReferenceDecoder.psnr(thumbnail.firstFrame.buffer.packedBytes, expected.packedBytes), 30)
    }

    func testThumbnailNeverEnlargesAndRejectsZero() throws {
        let input = temporaryURL("small.png")
        let output = temporaryURL("same.png")
        defer { remove([input, output]) }
        try DownsampleFixtures.encode(try DownsampleFixtures.photo(width: 40, height: 30), as: .png).write(to: input)
        XCTAssertEqual(try webimage(["convert", input.path, output.path, "--thumbnail", "500"]).status, 0)
        XCTAssertEqual(try ImageDecoder.info(try Data(contentsOf: output)).width, 40)
        let bad = try webimage(["convert", input.path, output.path, "--thumbnail", "0"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--thumbnail"), bad.stderr)
    }
}
