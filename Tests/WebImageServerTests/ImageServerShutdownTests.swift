import Foundation
import TestSupport
import WebImageServerCore
import WebImageSync
import XCTest

/// The built `webimage-server` executable as a child process: SIGTERM lets the requests in flight finish.
final class ImageServerShutdownTests: XCTestCase {
    static var binary: URL { Corpus.packageRoot.appendingPathComponent(".build/debug/webimage-server") }

    func testSIGTERMDrainsRequestsInFlight() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw XCTSkip("\(Self.binary.path) not built; run `swift build` first")
        }
        let origin = try HTTPTestServer.start()
        defer { origin.shutdown() }
        let bytes = try TestImages.gradient(width: 320, height: 240)
        for index in 0..<4 {
            origin.route("/slow\(index).jpg", HTTPTestResponse.bytes(bytes, contentType: "image/jpeg").delayed(by: 1.5))
        }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-sigterm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }

        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--cache", cache.path, "--allow-unsigned",
                             "--allow-network", "127.0.0.0/8"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let exited = expectation(description: "exited")
        process.terminationHandler = { _ in exited.fulfill() }
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // A line on stdout says where it listens (logs go to stderr).
        let port = try await ServerHarness.listeningPort(out)

        let requests = (0..<4).map { index in
            Task { await ServerHarness.get(URL(string: "http://127.0.0.1:\(port)/image?url=\(QueryString.escape(origin.url("/slow\(index).jpg").absoluteString))&w=100&format=png")!) }
        }
        // Wait (polling with a deadline) until every request has reached the origin, then SIGTERM.
        let deadline = Date().addingTimeInterval(10)
        while origin.totalRequestCount < 4, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(origin.totalRequestCount, 4)
        kill(process.processIdentifier, SIGTERM)

        for request in requests {
            let reply = await request.value
            XCTAssertEqual(reply.status, 200, "a request in flight at SIGTERM completes")
            XCTAssertEqual(try reply.decoded().width, 100)
        }
        await fulfillment(of: [exited], timeout: 10)
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0)
        // And it no longer listens.
        let after = await ServerHarness.get(URL(string: "http://127.0.0.1:\(port)/healthz")!)
        XCTAssertEqual(after.status, -1)
    }
}
