import Foundation
import TestSupport
import XCTest

/// `webimage fetch` on hostile sources, one child process per case, with the library's DEFAULT settings (no
/// flag): each fails with its typed reason, in time, and the child's peak RSS (`wait4`'s `ru_maxrss`, through GNU time) stays
/// at most 200 MB. Then the transfer flags: `--max-bytes`, `--public-only`, `--no-file-urls`.
///
/// Prints one `HOSTILE | case | reason | time | peak RSS` line per case (the README's table).
final class HostileSourceCLITests: XCTestCase {
    private static let rssBound = 200 << 20
    /// The default transfer timeout (15 s) plus 1 s, plus the child's start-up.
    private static let timeBound = 15.0 + 1 + 2
    private var server: HTTPTestServer!
    private var folder: URL!

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
        folder = try CLIProcess.temporaryFolder("hostile")
    }

    override func tearDown() {
        server.shutdown()
        try? FileManager.default.removeItem(at: folder) // best effort: a temporary folder
    }

    /// Runs `webimage fetch <target> --cache <tmp> extra…`, checks failure, reason, time and peak RSS.
    @discardableResult
    private func fetch(_ name: String, _ target: String, extra: [String] = [], reason: String,
                       file: StaticString = #filePath, line: UInt = #line) throws -> WebImageCLI.MeasuredRun {
        let cache = folder.appendingPathComponent("cache-\(UUID().uuidString)").path
        // A runaway child is killed at twice the bound (its peak then fails the test).
        let run = try WebImageCLI.runMeasured(["fetch", target, "--cache", cache] + extra,
                                              deadline: Self.timeBound + 5, rssCeiling: 2 * Self.rssBound)
        let failure = run.stderr.split(separator: "\n").first { $0.contains("FAILED") }.map(String.init) ?? run.stderr
        HostileReport.line(name, reason: failure, seconds: run.seconds, peakRSS: run.peakRSS)
        XCTAssertFalse(run.wasKilled, "\(name): killed at the deadline or memory ceiling", file: file, line: line)
        XCTAssertEqual(run.status, 1, "\(name): exit status; stderr: \(run.stderr)", file: file, line: line)
        XCTAssertTrue(run.stderr.contains(reason), "\(name): expected '\(reason)' in: \(run.stderr)", file: file, line: line)
        XCTAssertLessThanOrEqual(run.peakRSS, Self.rssBound, "\(name): peak RSS \(run.peakRSS >> 20) MB", file: file, line: line)
        XCTAssertLessThanOrEqual(run.seconds, Self.timeBound, "\(name): \(run.seconds) s", file: file, line: line)
        return run
    }

    private let tooLarge = "response larger than"

    func testEndlessChunkedBody() throws {
        server.route("/endless", .endlessRandom(seed: 5))
        try fetch("endless chunked random body", server.url("/endless").absoluteString, reason: tooLarge)
    }

    func testGzipBomb() throws {
        server.route("/bomb.gz", .zeroBomb(decodedBytes: 4 << 30, encoding: .gzip))
        try fetch("gzip bomb (4 GiB of zeros)", server.url("/bomb.gz").absoluteString, reason: tooLarge)
    }

    func testDeflateBomb() throws {
        server.route("/bomb.z", .zeroBomb(decodedBytes: 4 << 30, encoding: .deflate))
        try fetch("deflate bomb (4 GiB of zeros)", server.url("/bomb.z").absoluteString, reason: tooLarge)
    }

    func testHugeDeclaredLength() throws {
        server.route("/huge", .hugeDeclaredLength(10_000_000_000))
        try fetch("Content-Length 10 GB, endless body", server.url("/huge").absoluteString, reason: tooLarge)
    }

    func testDevZero() throws {
        try fetch("file:///dev/zero", "file:///dev/zero", reason: "not a regular file: /dev/zero is a character device")
    }

    func testFIFO() throws {
        let fifo = folder.appendingPathComponent("pipe")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo errno \(errno)")
        try fetch("a FIFO", fifo.absoluteString, reason: "is a FIFO")
    }

    func testSparse2GBFile() throws {
        let sparse = folder.appendingPathComponent("sparse.png")
        let descriptor = open(sparse.path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(ftruncate(descriptor, 2 << 30), 0) // 2 GiB of holes: nothing written
        close(descriptor)
        try fetch("2 GiB sparse file", sparse.absoluteString, reason: tooLarge)
    }

    func testRedirectToAFileURL() throws {
        server.route("/sneaky.png", .redirect(to: "file:///etc/passwd"))
        try fetch("redirect to file:///etc/passwd", server.url("/sneaky.png").absoluteString,
                  reason: "file URL refused: file:///etc/passwd")
    }

    // MARK: - Flags

    func testMaxBytesFlag() throws {
        server.route("/a.bin", .bytes(testBytes(2_000)))
        try fetch("--max-bytes 1000", server.url("/a.bin").absoluteString, extra: ["--max-bytes", "1000"],
                  reason: "response larger than 1000 bytes")
    }

    func testMaxBytesNoneAndMalformed() throws {
        server.route("/ok.png", .bytes(try TestImages.png(), contentType: "image/png"))
        let cache = folder.appendingPathComponent("cache-none").path
        let unlimited = try WebImageCLI.runMeasured(["fetch", server.url("/ok.png").absoluteString, "--cache", cache,
                                                     "--max-bytes", "none"])
        XCTAssertEqual(unlimited.status, 0, unlimited.stderr)
        let malformed = try WebImageCLI.runMeasured(["fetch", server.url("/ok.png").absoluteString, "--max-bytes", "lots"])
        XCTAssertEqual(malformed.status, 64, "a usage error")
        XCTAssertTrue(malformed.stderr.contains("--max-bytes must be a byte count or 'none'"), malformed.stderr)
    }

    func testPublicOnlyFlagPrintsTheRefusedAddress() throws {
        server.route("/a.png", .bytes(testBytes(10)))
        try fetch("--public-only on 127.0.0.1", server.url("/a.png").absoluteString, extra: ["--public-only"],
                  reason: "refused by the source policy: 127.0.0.1 is loopback, not public")
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testNoFileURLsFlag() throws {
        let plain = folder.appendingPathComponent("a.png")
        try Data(testBytes(10)).write(to: plain)
        try fetch("--no-file-urls", plain.path, extra: ["--no-file-urls"], reason: "file URL refused: \(plain.absoluteString)")
    }

    private func testBytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) } }
}

/// The report line, in the same format as FetcherTests' `HostileReport`.
private enum HostileReport {
    static func line(_ name: String, reason: String, seconds: Double, peakRSS: Int) {
        let short = reason.replacingOccurrences(of: "FAILED  ", with: "")
        print("HOSTILE-CLI | \(name) | \(short) | \(String(format: "%.2f s", seconds)) | " +
              String(format: "%.0f MB", Double(peakRSS) / 1_048_576))
    }
}
