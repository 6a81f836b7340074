import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImageServerCore
import XCTest

/// The service against an origin that writes hostile response heads byte for byte (`RawHTTPServer`): a header
/// that once crashed the process, redirects that made our check and libcurl read different targets, and
/// redirects with no target.
final class ImageServerOriginTrustTests: XCTestCase {
    private static func image() throws -> [UInt8] {
        let jpeg = try TestImages.gradient(width: 20, height: 10)
        return Array("HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n".utf8)
            + Array("Cache-Control: =\r\nCache-Control: max-age=1,=\r\nAge: =\r\nExpires: =\r\nETag: =\r\n\r\n".utf8) + Array(jpeg)
    }

    /// Each source answers by path; `/evil` is the foreign target every bypass aims at.
    private func origin(_ heads: @escaping @Sendable (_ port: Int) -> [String: String]) throws -> RawHTTPServer {
        let image = try Self.image()
        let port = Mutex(0)
        let server = try RawHTTPServer { path, _ in
            if path == "/ok" || path == "/evil" { return image }
            return Array((heads(port.withLock { $0 })[path] ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n").utf8)
        }
        port.withLock { $0 = server.port }
        return server
    }

    func testMalformedCacheHeadersAreServedAndTheServerStaysUp() async throws {
        let source = try origin { _ in [:] }
        defer { source.shutdown() }
        let harness = try await ServerHarness()
        for width in [10, 12] {
            let reply = await harness.image([("url", source.url("/ok").absoluteString), ("w", "\(width)")])
            XCTAssertEqual(reply.status, 200)
        }
        await harness.stop()
    }

    func testARedirectCannotLeaveTheHostAllowList() async throws {
        let source = try origin { port in
            let allowed = "http://127.0.0.1:\(port)/ok", foreign = "http://localhost:\(port)/evil"
            return ["/space": "HTTP/1.1 302 Found\r\nLocation : \(allowed)\r\nLocation: \(foreign)\r\nContent-Length: 0\r\n\r\n",
                    "/empty": "HTTP/1.1 302 Found\r\nLocation:\r\nLocation: \(foreign)\r\nContent-Length: 0\r\n\r\n"]
        }
        defer { source.shutdown() }
        let harness = try await ServerHarness { $0.allowedHosts = ["127.0.0.1"] }
        for path in ["/space", "/empty"] {
            let reply = await harness.image([("url", source.url(path).absoluteString)])
            XCTAssertEqual(reply.status, 403, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
        }
        XCTAssertEqual(source.requestHeads(for: "/evil").count, 0, "the foreign image was never fetched")
        await harness.stop()
    }

    /// A redirect the origin made unfollowable is the origin's failure: 502, not 400 naming the client's URL. A
    /// redirect to another scheme is a refused source (403), as ImageServerHostileTests has it for `/to-ftp`.
    func testAMalformedRedirectIsTheOriginsFailure() async throws {
        let source = try origin { _ in
            ["/none": "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
             "/ftp": "HTTP/1.1 301 Moved\r\nLocation: ftp://127.0.0.1/a.jpg\r\nContent-Length: 0\r\n\r\n"]
        }
        defer { source.shutdown() }
        let harness = try await ServerHarness()
        for (path, status) in [("/none", 502), ("/ftp", 403)] {
            let reply = await harness.image([("url", source.url(path).absoluteString)])
            XCTAssertEqual(reply.status, status, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
        }
        await harness.stop()
    }
}
