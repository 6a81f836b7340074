import Foundation
import TestSupport
import WebImage
import XCTest

/// `webimage fetch` against a loopback server, then `webimage cache stats|verify|clear` on what it cached.
final class FetchCacheCLITests: XCTestCase {
    private var server: HTTPTestServer!
    private var folder: URL!

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
        folder = try CLIProcess.temporaryFolder("fetch")
        server.route("/good.png", .bytes(try patternPNG(seed: 1), contentType: "image/png"))
        server.route("/other.png", .bytes(try patternPNG(seed: 2), contentType: "image/png"))
    }

    override func tearDown() {
        server.shutdown()
        try? FileManager.default.removeItem(at: folder) // best effort: a temporary folder
    }

    private var cachePath: String { folder.appendingPathComponent("cache").path }

    func testFetchWritesGoodImagesAndExplainsEachFailure() throws {
        let out = folder.appendingPathComponent("out")
        let run = try CLIProcess.run(["fetch", server.url("/good.png").absoluteString, server.url("/missing.png").absoluteString,
                                      "--out", out.path, "--cache", cachePath])
        XCTAssertEqual(run.status, 1, "a failed URL makes the exit status 1")
        XCTAssertTrue(run.stderr.contains("/missing.png") && run.stderr.contains("HTTP 404"), run.stderr)
        XCTAssertTrue(run.stdout.contains("1 ok, 1 failed"), run.stdout)
        let written = try ImageDecoder.decode(try Data(contentsOf: out.appendingPathComponent("good.png")))
        XCTAssertEqual(written.width, 40)
        XCTAssertEqual(written.height, 30)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.appendingPathComponent("missing.png").path))
    }

    func testFetchReencodesThumbnailsInTheRequestedFormat() throws {
        let out = folder.appendingPathComponent("thumbs")
        let run = try CLIProcess.run(["fetch", server.url("/good.png").absoluteString, "--thumbnail", "20", "--format", "webp",
                                      "--out", out.path, "--cache", cachePath])
        XCTAssertEqual(run.status, 0, run.stderr)
        let thumb = try ImageDecoder.decode(try Data(contentsOf: out.appendingPathComponent("good.webp")))
        XCTAssertEqual(thumb.format, .webp)
        XCTAssertEqual(thumb.width, 20)
        XCTAssertEqual(thumb.height, 15)
    }

    func testCacheStatsVerifyAndClearOnAFetchedCache() throws {
        // Given a cache filled by fetch
        let urls = [server.url("/good.png"), server.url("/other.png")]
        let fetch = try CLIProcess.run(["fetch"] + urls.map(\.absoluteString) + ["--cache", cachePath])
        XCTAssertEqual(fetch.status, 0, fetch.stderr)

        // Then stats counts both entries and verify passes
        let stats = try CLIProcess.run(["cache", "stats", "--path", cachePath])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        XCTAssertTrue(stats.stdout.contains("entries:       2"), stats.stdout)
        let verify = try CLIProcess.run(["cache", "verify", "--path", cachePath])
        XCTAssertEqual(verify.status, 0, verify.stderr + verify.stdout)
        XCTAssertTrue(verify.stdout.contains("quick_check: ok"), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("verify: ok"), verify.stdout)

        // When one entry's bytes are replaced by bytes that do not decode
        let key = urls[1].absoluteString
        try DiskCache(path: cachePath).setObject(Data("definitely not an image".utf8), forKey: key)

        // Then verify names it and fails
        let corrupt = try CLIProcess.run(["cache", "verify", "--path", cachePath])
        XCTAssertEqual(corrupt.status, 1, corrupt.stdout)
        XCTAssertTrue(corrupt.stderr.contains("BAD  \(key)"), corrupt.stderr)
        XCTAssertFalse(corrupt.stderr.contains(urls[0].absoluteString), corrupt.stderr)

        // And clear empties the cache
        let clear = try CLIProcess.run(["cache", "clear", "--path", cachePath])
        XCTAssertEqual(clear.status, 0, clear.stderr)
        XCTAssertTrue(clear.stdout.contains("removed 2 entries"), clear.stdout)
        XCTAssertEqual(try DiskCache(path: cachePath).usage().entryCount, 0)
    }

    func testCacheTrimToACount() throws {
        let fetch = try CLIProcess.run(["fetch", server.url("/good.png").absoluteString, server.url("/other.png").absoluteString,
                                        "--cache", cachePath])
        XCTAssertEqual(fetch.status, 0, fetch.stderr)
        let trim = try CLIProcess.run(["cache", "trim", "--count", "1", "--path", cachePath])
        XCTAssertEqual(trim.status, 0, trim.stderr)
        XCTAssertTrue(trim.stdout.contains("2 → 1 entries"), trim.stdout)
    }

    func testEveryCommandsHelpShowsAnExample() throws {
        for command in [["demo"], ["fetch"], ["cache"], ["cache", "stats"], ["cache", "verify"], ["cache", "trim"], ["cache", "clear"]] {
            let run = try CLIProcess.run(command + ["--help"])
            XCTAssertEqual(run.status, 0, "\(command)")
            XCTAssertTrue(run.stdout.contains("Example"), "\(command): \(run.stdout)")
        }
    }
}
