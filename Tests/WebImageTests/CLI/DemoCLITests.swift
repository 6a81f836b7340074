import Foundation
import WebImage
import XCTest

/// `webimage demo` end to end: the three phases, the contact sheet and the animation.
final class DemoCLITests: XCTestCase {
    func testDemoLoadsTheGalleryThreeTimesAndWritesItsPictures() throws {
        // Given empty output and cache folders
        let output = try CLIProcess.temporaryFolder("demo-out")
        let cache = try CLIProcess.temporaryFolder("demo-cache")
        defer {
            try? FileManager.default.removeItem(at: output) // best effort: temporary folders
            try? FileManager.default.removeItem(at: cache)
        }

        // When the demo runs
        let run = try CLIProcess.run(["demo", "--output", output.path, "--cache", cache.path])

        // Then it succeeds and prints one row per phase, with the sources of each
        XCTAssertEqual(run.status, 0, run.stderr)
        // Table rows, not progress-bar lines (those carry a `[###…]` bar).
        let rows = run.stdout.split(separator: "\n").map(String.init).filter { !$0.contains("[") }
        let cold = try XCTUnwrap(rows.first { $0.hasPrefix("cold ") }, run.stdout)
        let disk = try XCTUnwrap(rows.first { $0.hasPrefix("warm disk ") }, run.stdout)
        let memory = try XCTUnwrap(rows.first { $0.hasPrefix("warm memory ") }, run.stdout)
        XCTAssertTrue(cold.contains("remote"), cold)
        XCTAssertTrue(disk.contains("disk"), disk)
        XCTAssertFalse(disk.contains("remote"), disk)
        XCTAssertTrue(memory.contains("memory"), memory)
        XCTAssertFalse(memory.contains("disk") || memory.contains("remote"), memory)
        XCTAssertTrue(run.stdout.contains(output.path), "the demo says where its outputs are")
        XCTAssertTrue(run.stdout.contains(cache.path), "the demo says where its cache is")

        // And the contact sheet is a PNG of plausible size that is not blank
        let sheet = try ImageDecoder.decode(try Data(contentsOf: output.appendingPathComponent("webimage-demo.png")))
        XCTAssertEqual(sheet.format, .png)
        XCTAssertGreaterThan(sheet.width, 800)
        XCTAssertGreaterThan(sheet.height, 600)
        var colors = Set<UInt32>()
        let buffer = sheet.firstFrame.buffer
        for y in stride(from: 0, to: buffer.height, by: 7) {
            for x in stride(from: 0, to: buffer.width, by: 7) {
                let p = buffer.pixel(x: x, y: y)
                colors.insert(UInt32(p.r) << 16 | UInt32(p.g) << 8 | UInt32(p.b))
            }
        }
        XCTAssertGreaterThan(colors.count, 500, "a contact sheet of thumbnails has many colours")

        // And the animation is an animated GIF
        let animation = try ImageDecoder.decode(try Data(contentsOf: output.appendingPathComponent("webimage-demo.gif")))
        XCTAssertEqual(animation.format, .gif)
        XCTAssertGreaterThan(animation.frameCount, 1)

        // And the cache holds the gallery
        let usage = try DiskCache(path: cache.path).usage()
        XCTAssertGreaterThan(usage.entryCount, 40)
    }
}
