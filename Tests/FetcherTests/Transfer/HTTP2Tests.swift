import Fetcher
import Foundation
import TestSupport
import XCTest

/// HTTP/2 against nginx over TLS: ALPN picks h2, the response says so, and concurrent transfers to one host
/// multiplex over a single connection.
final class HTTP2Tests: FetchTestCase {
    func testConcurrentTransfersMultiplexOverOneHTTP2Connection() throws {
        var files: [String: Data] = [:]
        for i in 0..<24 { files["image-\(i).bin"] = testPayload(40_000 + i * 1_000, seed: UInt8(i)) }
        let h2: HTTP2TestServer
        do { h2 = try HTTP2TestServer.start(files: files) } catch let error as HTTP2TestServer.Unavailable {
            throw XCTSkip(error.description)
        }
        defer { h2.shutdown() }

        let recorders = files.keys.sorted().map { name -> (String, FetchRecorder) in
            var request = FetchRequest(url: h2.url("/\(name)"), timeout: 20)
            request.allowsInvalidCertificates = true
            let recorder = FetchRecorder(expectation(description: name), thread: queue.thread)
            recorder.start(request, on: queue)
            return (name, recorder)
        }
        wait(for: recorders.map(\.1.done), timeout: 30)
        flush(queue.thread)

        for (name, recorder) in recorders {
            let events = recorder.snapshot
            XCTAssertNil(events.error, name)
            XCTAssertEqual(events.chunks.reduce(Data(), +), files[name], name)
            XCTAssertEqual(events.responses.last?.httpVersion, "HTTP/2", name)
        }
        let log = try h2.accessLog()
        XCTAssertEqual(log.count, files.count)
        XCTAssertEqual(Set(log.map(\.protocol)), ["HTTP/2.0"])
        XCTAssertEqual(Set(log.map(\.connection)).count, 1, "all transfers shared one connection: \(log)")
    }

    func testPlainHTTPReportsHTTP11() {
        server.route("/plain", .bytes([1, 2, 3]))
        let events = fetchAndWait(request("/plain"), on: queue)
        XCTAssertEqual(events.responses.last?.httpVersion, "HTTP/1.1")
    }
}
