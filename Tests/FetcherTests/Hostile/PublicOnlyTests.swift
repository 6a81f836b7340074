@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// `SourcePolicy.publicOnly` against the loopback server: every way of naming a local address is refused on
/// the address actually dialled, with a typed error naming it, and the server sees no connection and no request.
final class PublicOnlyTests: FetchTestCase {
    private let timeout = 2.0

    private func publicOnly(_ urlString: String) throws -> FetchRequest {
        var request = FetchRequest(url: try XCTUnwrap(URL(string: urlString)), timeout: timeout)
        request.sourcePolicy = .publicOnly
        return request
    }

    private func assertRefused(_ name: String, _ request: FetchRequest, addresses: Set<String>,
                               category: AddressCategory, file: StaticString = #filePath, line: UInt = #line) {
        server.route("/a.png", .bytes([1, 2, 3]))
        let events = fetchHostile(name, request, on: queue, bound: timeout + 1, file: file, line: line)
        guard case .addressRefused(let address, let refused)? = events.error else {
            return XCTFail("\(name): got \(String(describing: events.result))", file: file, line: line)
        }
        XCTAssertTrue(addresses.contains(address), "\(name): refused \(address)", file: file, line: line)
        XCTAssertEqual(refused, category, name, file: file, line: line)
        XCTAssertEqual(server.connectionCount, 0, "\(name): no connection", file: file, line: line)
        XCTAssertEqual(server.totalRequestCount, 0, "\(name): no request byte", file: file, line: line)
    }

    /// `allowedHosts`: a redirect to a host it does not name is not followed (`.redirectRefused`, the target never
    /// asked); one to a host it names is.
    func testARedirectToAHostNotAllowedIsRefused() throws {
        server.route("/a.png", .bytes([1, 2, 3]))
        server.route("/away", .redirect(to: "http://localhost:\(server.port)/a.png"))
        server.route("/here", .redirect(to: "/a.png"))
        var request = FetchRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/away")), timeout: timeout)
        request.sourcePolicy = SourcePolicy(isPublicOnly: false, allowedHosts: ["127.0.0.1"])
        let refused = fetchAndWait(request, on: queue)
        guard case .redirectRefused(let target)? = refused.error else {
            return XCTFail("got \(String(describing: refused.result))")
        }
        XCTAssertEqual(target.host, "localhost")
        XCTAssertEqual(server.requestCount(for: "/a.png"), 0, "the refused redirect was not followed")
        request.url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/here"))
        guard case .success(let result)? = fetchAndWait(request, on: queue).result else { return XCTFail("within the host") }
        XCTAssertEqual(result.body, Data([1, 2, 3]))
        XCTAssertTrue(SourcePolicy(isPublicOnly: false, allowedHosts: ["*.example.com"]).allowsHost("a.b.EXAMPLE.com"))
        XCTAssertFalse(SourcePolicy(isPublicOnly: false, allowedHosts: ["*.example.com"]).allowsHost("badexample.com"))
        XCTAssertFalse(SourcePolicy(isPublicOnly: false, allowedHosts: ["*.example.com"]).allowsHost(nil))
        XCTAssertTrue(SourcePolicy.allowAll.allowsHost(nil))
    }

    func testLocalhostIsRefused() throws {
        assertRefused("localhost (public-only)", try publicOnly("http://localhost:\(server.port)/a.png"),
                      addresses: ["127.0.0.1", "::1"], category: .loopback)
    }

    func testIPv6LoopbackIsRefused() throws {
        assertRefused("[::1] (public-only)", try publicOnly("http://[::1]:\(server.port)/a.png"),
                      addresses: ["::1"], category: .loopback)
    }

    func testMappedIPv4LoopbackIsRefused() throws {
        assertRefused("[::ffff:127.0.0.1] (public-only)", try publicOnly("http://[::ffff:127.0.0.1]:\(server.port)/a.png"),
                      addresses: ["::ffff:127.0.0.1"], category: .loopback)
    }

    func testUnspecifiedAddressIsRefused() throws {
        assertRefused("0.0.0.0 (public-only)", try publicOnly("http://0.0.0.0:\(server.port)/a.png"),
                      addresses: ["0.0.0.0"], category: .unspecified)
    }

    func testHostNameResolvingToLoopbackIsRefused() throws {
        var request = try publicOnly("http://images.rebind.test:\(server.port)/a.png")
        request.resolveOverrides = ["images.rebind.test:\(server.port):127.0.0.1"]
        assertRefused("name whose DNS answer is 127.0.0.1 (public-only)", request,
                      addresses: ["127.0.0.1"], category: .loopback)
    }

    func testTheSameRequestsGoThroughUnderAllowAllAndTheAllowList() throws {
        server.route("/a.png", .bytes([1, 2, 3]))
        var pinned = FetchRequest(url: try XCTUnwrap(URL(string: "http://images.allowed.test:\(server.port)/a.png")),
                                  timeout: timeout)
        pinned.resolveOverrides = ["images.allowed.test:\(server.port):127.0.0.1"]
        XCTAssertEqual(fetchAndWait(pinned, on: queue).body, Data([1, 2, 3]), "allow-all: the default")
        var listed = try publicOnly("http://[::ffff:127.0.0.1]:\(server.port)/a.png")
        listed.sourcePolicy = .publicOnly(allowing: [try XCTUnwrap(IPNetwork("127.0.0.0/8"))])
        XCTAssertEqual(fetchAndWait(listed, on: queue).body, Data([1, 2, 3]), "the allow-list holds 127/8")
    }

    func testAReusedConnectionIsCheckedAgain() throws {
        server.route("/a.png", .bytes([1, 2, 3]))
        XCTAssertEqual(fetchAndWait(request("/a.png"), on: queue).body, Data([1, 2, 3]))
        XCTAssertEqual(server.connectionCount, 1)
        // Same host and port on the same network thread: libcurl would reuse the open connection, without
        // opening a socket; the check before the request catches it.
        var refused = request("/a.png")
        refused.sourcePolicy = .publicOnly
        let events = fetchHostile("reused connection to 127.0.0.1 (public-only)", refused, on: queue, bound: timeout + 1)
        XCTAssertEqual(events.error, .addressRefused(address: "127.0.0.1", category: .loopback))
        XCTAssertEqual(server.requestCount(for: "/a.png"), 1, "the second request was never sent")
    }

    func testEnvironmentProxiesAreNotUsedUnderThePolicy() throws {
        // A second server stands in for a proxy named by the environment: libcurl sends it the absolute URL.
        let proxy = try HTTPTestServer.start()
        defer { proxy.shutdown() }
        server.route("/a.png", .bytes([1, 2, 3]))
        setenv("http_proxy", "http://127.0.0.1:\(proxy.port)", 1)
        defer { unsetenv("http_proxy") }
        let origin = "http://127.0.0.1:\(server.port)/a.png"

        var viaProxy = FetchRequest(url: try XCTUnwrap(URL(string: origin)), timeout: timeout)
        viaProxy.sourcePolicy = .allowAll
        _ = fetchAndWait(viaProxy, on: queue)
        XCTAssertEqual(proxy.totalRequestCount, 1, "allow-all: the environment's proxy is used")

        var direct = try publicOnly(origin)
        direct.sourcePolicy = .publicOnly(allowing: [try XCTUnwrap(IPNetwork("127.0.0.0/8"))])
        XCTAssertEqual(fetchAndWait(direct, on: queue).body, Data([1, 2, 3]))
        XCTAssertEqual(proxy.totalRequestCount, 1, "public-only: the proxy is bypassed, the origin's address checked")
        XCTAssertEqual(server.requestCount(for: "/a.png"), 1)
    }
}
