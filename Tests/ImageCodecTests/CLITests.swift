import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Runs the built `webimage` binary (`.build/debug/webimage`) on corpus files and temporary files.
final class CLITests: XCTestCase {
    typealias Run = WebImageCLI.Run

    private func webimage(_ arguments: [String]) throws -> Run {
        do { return try WebImageCLI.run(arguments) } catch let notBuilt as WebImageCLI.NotBuilt {
            throw XCTSkip(notBuilt.description)
        }
    }

    private func corpusFile(_ suffix: String) throws -> URL {
        do {
            guard let entry = try Corpus.entries().first(where: { $0.path.hasSuffix(suffix) }) else {
                throw XCTSkip("\(suffix) not in the corpus")
            }
            return entry.url
        } catch let missing as Corpus.Missing {
            throw XCTSkip(missing.description)
        }
    }

    private func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(UUID().uuidString)-\(name)")
    }

    func testInfoPrintsOneJSONObjectPerFileAndFailsForUnreadableOnes() throws {
        let jpeg = try corpusFile("exif_Landscape_6.jpg")
        let apng = try corpusFile("danbooru_apng_normal.png")
        let run = try webimage(["info", jpeg.path, "/nonexistent/file.png", apng.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("/nonexistent/file.png"), run.stderr)
        let lines = run.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(first["format"] as? String, "jpeg")
        XCTAssertEqual(first["width"] as? Int, 1200)
        XCTAssertEqual(first["exif_orientation"] as? Int, 6)
        XCTAssertTrue(first["loop_count"] is NSNull)
        let second = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        XCTAssertEqual(second["format"] as? String, "apng")
        XCTAssertEqual(second["frames"] as? Int, 3)
        XCTAssertEqual(second["loop_count"] as? Int, 0)
        XCTAssertEqual(second["has_alpha"] as? Bool, true)
        XCTAssertEqual((second["durations"] as? [Double])?.count, 3)
        XCTAssertTrue(first["icc_bytes"] is NSNull, "an untagged JPEG")
    }

    /// `info` reports what a file says about its colours.
    func testInfoReportsTheColourDescription() throws {
        let dir: URL
        do { dir = try Corpus.require() } catch { throw XCTSkip("\(error)") }
        let p3 = dir.appendingPathComponent("color/jpeg/libavif_apple_gainmap_old.jpg")
        let gamma = dir.appendingPathComponent("color/png/pngsuite_g03n2c08.png")
        guard FileManager.default.fileExists(atPath: p3.path) else { throw XCTSkip("color corpus missing") }
        let run = try webimage(["info", p3.path, gamma.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(first["icc_bytes"] as? Int, 536)
        let second = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        XCTAssertEqual(second["png_gamma"] as? Double ?? 0, 0.35, accuracy: 0.00001)
        XCTAssertTrue(second["icc_bytes"] is NSNull)
    }

    func testConvertKeepsAnimationAndAppliesOrientationToStills() throws {
        let apng = try corpusFile("danbooru_apng_normal.png")
        let out = temporaryURL("anim.png")
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try webimage(["convert", apng.path, out.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let converted = try ImageDecoder.decode(try Data(contentsOf: out))
        let original = try ImageDecoder.decode(try Data(contentsOf: apng))
        XCTAssertEqual(converted.format, .apng)
        XCTAssertEqual(converted.frameCount, original.frameCount)
        XCTAssertEqual(converted.loopCount, original.loopCount)
        for i in 0..<original.frameCount {
            XCTAssertEqual(converted.duration(at: i), original.duration(at: i), accuracy: 0.001)
            XCTAssertEqual(try converted.frame(at: i).buffer, try original.frame(at: i).buffer)
        }

        let rotated = try corpusFile("exif_Landscape_6.jpg")
        let still = temporaryURL("upright.jpg")
        defer { try? FileManager.default.removeItem(at: still) }
        let run2 = try webimage(["convert", rotated.path, still.path, "--quality", "80"])
        XCTAssertEqual(run2.status, 0, run2.stderr)
        let upright = try ImageDecoder.decode(try Data(contentsOf: still))
        XCTAssertEqual(upright.width, 1800)
        XCTAssertEqual(upright.height, 1200)

        let frame = temporaryURL("frame.png")
        defer { try? FileManager.default.removeItem(at: frame) }
        let run3 = try webimage(["convert", apng.path, frame.path, "--frame", "2"])
        XCTAssertEqual(run3.status, 0, run3.stderr)
        let frameImage = try ImageDecoder.decode(try Data(contentsOf: frame))
        XCTAssertEqual(frameImage.frameCount, 1)
        XCTAssertEqual(frameImage.firstFrame.buffer, try original.frame(at: 2).buffer)
    }

    func testConvertFailsClearlyForUndecodableInput() throws {
        let bad = try corpusFile("pillow_apng_sequence_gap.png")
        let out = temporaryURL("never.png")
        let run = try webimage(["convert", bad.path, out.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("cannot decode"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
    }

    func testEveryCommandsHelpShowsAnExample() throws {
        for command in [["--help"], ["info", "--help"], ["convert", "--help"]] {
            let run = try webimage(command)
            XCTAssertEqual(run.status, 0)
            XCTAssertTrue(run.stdout.contains("Example"), "\(command): \(run.stdout)")
        }
    }
}
