import Fetcher
import Foundation
import Synchronization
import TestSupport
import WebImageServerCore
import XCTest

/// Review: the image service still refuses, with the right status, every redirect the fetcher now follows
/// itself (`hostRefused`, `redirectRefused`, `invalidRedirect`, `fileURLRefused`, address refusals per hop), and
/// still serves the redirects it must (a target with a space).
final class RedirectRefusalReviewTests: XCTestCase {
    private static func image() throws -> [UInt8] {
        let jpeg = try TestImages.gradient(width: 20, height: 10)
        return Array("HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n".utf8) + Array(jpeg)
    }

    /// An origin answering `/ok`, `/evil` and `/my%20photo.png` with an image and other paths from `heads`.
    private func origin(_ heads: @escaping @Sendable (_ port: Int) -> [String: [UInt8]]) throws -> RawHTTPServer {
        let image = try Self.image()
        let port = Mutex(0)
        let server = try RawHTTPServer { path, _ in
            if ["/ok", "/evil", "/my%20photo.png"].contains(path) { return image }
            return heads(port.withLock { $0 })[path] ?? Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8)
        }
        port.withLock { $0 = server.port }
        return server
    }

    private static func redirect(_ location: String) -> [UInt8] {
        Array("HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n".utf8)
    }

    func testEveryForbiddenRedirectIsRefusedWithItsStatus() async throws {
        let bomb = try ZlibEncoding.gzip([UInt8](repeating: 0, count: 8 << 20))
        let source = try origin { port in
            [
                "/encoded": Self.redirect("http://%6cocalhost:\(port)/evil"),
                "/userinfo": Self.redirect("http://127.0.0.1:\(port)@localhost:\(port)/evil"),
                "/relative": Self.redirect("//LOCALHOST:\(port)/evil"),
                "/file": Self.redirect("file:///etc/passwd"),
                "/metadata": Self.redirect("http://169.254.169.254/latest/meta-data/"),
                "/unspecified": Self.redirect("http://0.0.0.0:\(port)/evil"),
                "/private": Self.redirect("http://10.255.255.1:\(port)/evil"),
                "/loop": Self.redirect("/loop"),
                "/none": Array("HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n".utf8),
                "/bomb": Array("HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)\r\n\r\n".utf8) + bomb,
                "/space": Self.redirect("http://127.0.0.1:\(port)/my photo.png"),
                "/ftp": Self.redirect("ftp://127.0.0.1/a.jpg"),
                "/js": Self.redirect("javascript:alert(1)"),
                "/malformed": Self.redirect("http://a b.example/x"),
            ]
        }
        defer { source.shutdown() }
        let harness = try await ServerHarness { configuration in
            // The addresses below pass the host list, so the per-hop address check is what refuses them.
            configuration.allowedHosts = ["127.0.0.1", "169.254.169.254", "0.0.0.0", "10.255.255.1"]
            configuration.maximumSourceSize = 1 << 20
        }
        let expected: [(String, Int)] = [
            ("/encoded", 403), ("/userinfo", 403), ("/relative", 403), ("/file", 403),
            // A refused address answers as an unreachable origin does (502 "origin unreachable"): no oracle of
            // which internal names resolve (OriginOracleTests).
            ("/metadata", 502), ("/unspecified", 502), ("/private", 502),
            ("/loop", 502), ("/none", 502), ("/bomb", 413), ("/space", 200),
            // Another scheme is refused like file: (403, as ImageServerHostileTests has it); a target that is no
            // URL at all is the origin's failure (502).
            ("/ftp", 403), ("/js", 403), ("/malformed", 502),
        ]
        for (path, status) in expected {
            let reply = await harness.image([("url", source.url(path).absoluteString)])
            XCTAssertEqual(reply.status, status, "\(path): \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
        XCTAssertEqual(source.requestHeads(for: "/evil").count, 0, "the foreign image was never fetched")
        await harness.stop()
    }

    /// A redirect to a target libcurl then cannot use (an internationalised host in the C locale) is the
    /// origin's failure, 502, not a 400 naming the client's URL as invalid.
    func testATargetLibcurlCannotUseIsA502() async throws {
        let source = try origin { port in ["/idn": Self.redirect("http://bücher.example:\(port)/ok")] }
        defer { source.shutdown() }
        let harness = try await ServerHarness()
        let reply = await harness.image([("url", source.url("/idn").absoluteString)])
        XCTAssertEqual(reply.status, 502, String(decoding: reply.body.prefix(300), as: UTF8.self))
        await harness.stop()
    }
}
