import Foundation
import TestSupport
import WebImage
import XCTest

/// The decoding rows of the hostile-source suite (issue 13): the built `webimage fetch`, default settings, one
/// child process per case, the file served by the loopback server. Each case: the typed error, the time, and
/// the child's peak RSS from `wait4` (at most 200 MB). One line per case is printed ("HOSTILE …").
final class HostileDecodeCLITests: XCTestCase {
    private var server: HTTPTestServer!
    private var directory: URL!
    static let rssLimit = 200_000_000

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        server.shutdown()
        if FileManager.default.fileExists(atPath: directory.path) { try FileManager.default.removeItem(at: directory) }
    }

    private func encoded(_ format: ImageFormat, frames: Int = 1, side: Int = 16, progressive: Bool = false) throws -> Data {
        var buffer = try PixelBuffer(width: side, height: side)
        for y in 0..<side { for x in 0..<side { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 9), g: UInt8(y * 5), b: 60, a: 255)) } }
        var encoder = ImageEncoder(format: format, options: EncodeOptions(quality: 0.8, isProgressive: progressive))
        for _ in 0..<frames { encoder.addFrame(buffer, duration: 0.05) }
        return try encoder.encode()
    }

    /// Fetches `data` with `webimage fetch` and checks the outcome; returns the run.
    @discardableResult
    private func fetch(_ name: String, _ data: Data, arguments: [String] = [], expect expected: String?,
                       file: StaticString = #filePath, line: UInt = #line) throws -> MeasuredProcess.Run {
        let path = "/\(name.replacingOccurrences(of: " ", with: "-"))"
        server.route(path, .bytes(data, contentType: "application/octet-stream"))
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: WebImageCLI.binary.path), "build webimage first",
                      file: file, line: line)
        let run = try MeasuredProcess.run(WebImageCLI.binary.path,
                                  ["fetch", server.url(path).absoluteString, "--cache", directory.path] + arguments)
        let output = run.stdout + run.stderr
        if let expected {
            XCTAssertEqual(run.status, 1, "\(name): should fail\n\(output)", file: file, line: line)
            XCTAssertTrue(output.contains(expected), "\(name): expected «\(expected)» in\n\(output)", file: file, line: line)
        } else {
            XCTAssertEqual(run.status, 0, "\(name): should succeed\n\(output)", file: file, line: line)
        }
        XCTAssertLessThanOrEqual(run.seconds, 16, "\(name): within the 15 s timeout + 1 s", file: file, line: line)
        XCTAssertLessThanOrEqual(run.peakRSS, Self.rssLimit, "\(name): peak RSS", file: file, line: line)
        print(String(format: "HOSTILE %@ | %@ | %.2f s | %.0f MB", name, expected ?? "ok", run.seconds, run.peakMB))
        return run
    }

    func testPixelBombsJustOverTheDefaultLimitAreRefusedWithin200MB() throws {
        let side = 8661 // 75,012,921 pixels: just over 75,000,000
        try fetch("PNG 8661x8661", try DecodeBombs.png(try encoded(.png), width: side, height: side),
                  expect: "exceeds the decode limit pixelsPerFrame: 75012921 > 75000000")
        try fetch("JPEG 8661x8661", try DecodeBombs.jpeg(try encoded(.jpeg), width: side, height: side),
                  expect: "exceeds the decode limit pixelsPerFrame: 75012921 > 75000000")
        try fetch("GIF 8661x8661", try DecodeBombs.gif(try encoded(.gif), width: side, height: side),
                  expect: "exceeds the decode limit pixelsPerFrame: 75012921 > 75000000")
        try fetch("WebP 8661x8661", try DecodeBombs.webp(try encoded(.webp), width: side, height: side),
                  expect: "exceeds the decode limit pixelsPerFrame: 75012921 > 75000000")
        // The issue's case: a PNG declaring 15000 × 15000 (was 892 MB RSS, decoded in full).
        try fetch("PNG 15000x15000", try DecodeBombs.png(try encoded(.png), width: 15000, height: 15000),
                  expect: "exceeds the decode limit pixelsPerFrame: 225000000 > 75000000")
        try fetch("PNG 40000x1", try DecodeBombs.png(try encoded(.png), width: 40000, height: 1),
                  expect: "exceeds the decode limit dimension: 40000 > 32768")
    }

    func testFrameAndScanBombsAreRefusedWithin200MB() throws {
        try fetch("GIF 3000 frames", try encoded(.gif, frames: 3000, side: 2),
                  expect: "exceeds the decode limit frameCount: 1001 > 1000") // the walk stops at frame 1001
        let progressive = try encoded(.jpeg, progressive: true)
        try fetch("JPEG 600 progressive scans", try DecodeBombs.manyScans(progressive, scans: 600),
                  expect: "exceeds the decode limit scanCount: 501 > 500")
    }

    func testThumbnailOfAnImageTooLargeForAFullDecodeWorksWithin200MB() throws {
        let jpeg = DecodeBombs.grayJPEG(width: 9000, height: 9000) // 81 Mpx
        try fetch("JPEG 9000x9000 full", jpeg, expect: "exceeds the decode limit pixelsPerFrame: 81000000 > 75000000")
        let run = try fetch("JPEG 9000x9000 --thumbnail 256", jpeg, arguments: ["--thumbnail", "256"], expect: nil)
        XCTAssertTrue(run.stdout.contains("256x256"), run.stdout)
    }
}
