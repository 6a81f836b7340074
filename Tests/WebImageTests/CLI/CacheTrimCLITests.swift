import Foundation
import TestSupport
import WebImage
import XCTest

/// `webimage cache trim` by size and age, and its argument checks.
final class CacheTrimCLITests: XCTestCase {
    func testTrimBySizeAndAgeAndRejectsMalformedValues() throws {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        let folder = try CLIProcess.temporaryFolder("trim")
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        let cachePath = folder.appendingPathComponent("cache").path
        server.route("/a.png", .bytes(try Self.png(), contentType: "image/png"))
        XCTAssertEqual(try CLIProcess.run(["fetch", server.url("/a.png").absoluteString, "--cache", cachePath]).status, 0)

        let byAge = try CLIProcess.run(["cache", "trim", "--age", "1d", "--path", cachePath])
        XCTAssertEqual(byAge.status, 0, byAge.stderr)
        XCTAssertTrue(byAge.stdout.contains("1 → 1 entries"), "a fresh entry is younger than a day: \(byAge.stdout)")
        let bySize = try CLIProcess.run(["cache", "trim", "--size", "0K", "--path", cachePath])
        XCTAssertEqual(bySize.status, 0, bySize.stderr)
        XCTAssertTrue(bySize.stdout.contains("1 → 0 entries"), bySize.stdout)

        let malformed = try CLIProcess.run(["cache", "trim", "--size", "lots", "--path", cachePath])
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.stderr.contains("--size"), malformed.stderr)
        let nothing = try CLIProcess.run(["cache", "trim", "--path", cachePath])
        XCTAssertNotEqual(nothing.status, 0, "trim needs a limit")
        let noCache = try CLIProcess.run(["cache", "stats", "--path", folder.appendingPathComponent("none").path])
        XCTAssertEqual(noCache.status, 1)
        XCTAssertTrue(noCache.stderr.contains("no cache at"), noCache.stderr)
    }

    private static func png() throws -> Data {
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try PixelBuffer(width: 8, height: 8, pixelFormat: .rgba8))
        return try encoder.encode()
    }
}
