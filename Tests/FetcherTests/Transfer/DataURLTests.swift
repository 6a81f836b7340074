@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// `data:` URLs (RFC 2397), as feeds scraped from HTML carry them: decoded by the fetcher, within the response
/// size limit, delivered as a transfer would be (response, one chunk, completion) on the network thread.
final class DataURLTests: FetchTestCase {
    private func fetch(_ text: String, limit: Int64? = FetchRequest.defaultMaximumResponseSize) -> FetchRecorder.Events {
        var request = FetchRequest(url: URL(string: text)!)
        request.maximumResponseSize = limit
        return fetchAndWait(request, on: queue)
    }

    func testBase64AndPercentEncodedPayloads() throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0xFF])
        let events = fetch("data:image/png;base64,\(png.base64EncodedString())")
        XCTAssertEqual(events.body, png)
        XCTAssertEqual(events.responses.first?.value(forHeader: "Content-Type"), "image/png")
        XCTAssertEqual(events.chunks, [png], "one chunk, as a transfer delivers")
        XCTAssertEqual(fetch("data:,a%20b%2C").body, Data("a b,".utf8))
        XCTAssertEqual(fetch("data:image/svg+xml;BASE64,PHN2Zz4").body, Data("<svg>".utf8), "unpadded, case-insensitive")
        XCTAssertEqual(fetch("data:,").body, Data(), "empty")
        XCTAssertEqual(fetch("data:,ab#part").body, Data("ab".utf8), "a fragment is not part of the bytes")
    }

    func testMalformedDataURLsAreInvalid() {
        for text in ["data:image/png;base64", "data:image/png;base64,@@@@", "data:image/png;base64,QUJD%00"] {
            guard case .invalidURL? = fetch(text).error else { XCTFail(text); continue }
        }
    }

    func testTheSizeLimitHoldsExactlyAtAndOnePast() {
        let payload = Data(repeating: 0xAB, count: 3_000).base64EncodedString()
        XCTAssertEqual(fetch("data:application/octet-stream;base64,\(payload)", limit: 3_000).body?.count, 3_000)
        guard case .responseTooLarge(limit: 2_999)? = fetch("data:application/octet-stream;base64,\(payload)", limit: 2_999).error else {
            return XCTFail("one byte past the limit")
        }
    }

    func testACancelledDataURLCompletesCancelledOnce() {
        queue.suspend()
        let done = expectation(description: "completed")
        let recorder = FetchRecorder(done, thread: thread)
        let operation = recorder.start(FetchRequest(url: URL(string: "data:,x")!), on: queue)
        operation.cancel()
        wait(for: [done], timeout: 5)
        queue.resume()
        let result = recorder.events.withLock { $0.result }
        if case .success? = result { XCTFail("a cancel before delivery wins") }
        XCTAssertEqual(recorder.events.withLock { $0.completions.count }, 1)
    }
}
