import Foundation
import TestSupport
import WebImageServerCore
import XCTest

/// Review: the `webimage-server` executable must report every metric the README lists. `ImageService` makes its
/// stored metrics (`webimage_request_duration_seconds`, `webimage_origin_fetches_total`,
/// `webimage_origin_bytes_total`, `webimage_decode_budget_waits_total`, `webimage_saturated_total`) when it is
/// made, and the command makes it before `ImageServer` bootstraps swift-metrics: they are bound to the no-op
/// backend for the life of the process. Only a fresh process shows it (a test process is bootstrapped by the
/// first harness), so this runs the built executable.
final class ExecutableMetricsReviewTests: XCTestCase {
    func testTheExecutableReportsTheDurationAndOriginMetrics() async throws {
        let binary = ImageServerShutdownTests.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let origin = try HTTPTestServer.start()
        defer { origin.shutdown() }
        origin.route("/photo.jpg", .bytes(try TestImages.gradient(width: 64, height: 48), contentType: "image/jpeg"))
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-metrics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }

        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--cache", cache.path, "--allow-unsigned",
                             "--allow-network", "127.0.0.0/8", "--log-level", "error"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
        let port = try await ServerHarness.listeningPort(out)

        let source = QueryString.escape(origin.url("/photo.jpg").absoluteString)
        let reply = await ServerHarness.get(URL(string: "http://127.0.0.1:\(port)/image?url=\(source)&w=32")!)
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(origin.totalRequestCount, 1, "control: one origin fetch")
        let text = String(decoding: await ServerHarness.get(URL(string: "http://127.0.0.1:\(port)/metrics")!).body, as: UTF8.self)
        XCTAssertTrue(text.contains("webimage_requests_total{status=\"200\"} 1"), "control: the per-call counter\n\(text)")
        XCTAssertTrue(text.contains("webimage_request_duration_seconds_count 1"), "no duration histogram\n\(text)")
        XCTAssertTrue(text.contains("webimage_origin_fetches_total 1"), "no origin fetches\n\(text)")
        XCTAssertTrue(text.contains("webimage_origin_bytes_total"), "no origin bytes\n\(text)")
    }
}
