import Foundation
import TestSupport
import WebImageServerCore
import WebImageServerHummingbird
import XCTest

/// `ImageServer.requestTimeout` and `maxRequestBodySize` on raw sockets: a request must arrive whole, head and
/// body, within its deadline, and its body is small. Before, the idle timeout closed a trickling head, but a GET
/// whose body trickled one byte at a time stayed open for ever (each byte is a whole body part).
final class RequestBoundsTests: XCTestCase {
    /// Sends `first`, then `drip` every 200 ms until the server closes or `seconds` pass; the seconds it took.
    static func trickle(_ client: RawClient, first: String, drip: String, for seconds: Double) -> (closedAfter: Double?, received: String) {
        let start = Date()
        var received = ""
        guard client.send(first) else { return (0, received) }
        while Date().timeIntervalSince(start) < seconds {
            if !client.send(drip) { return (Date().timeIntervalSince(start), received) }
            switch client.read() {
            case .closed: return (Date().timeIntervalSince(start), received)
            case .bytes(let text): received += text
            case .timedOut: break
            }
        }
        return (nil, received)
    }

    /// A GET whose body trickles (the idle timeout never fires: a byte every 200 ms) is closed at its deadline.
    func testATricklingBodyIsClosedAtTheRequestDeadline() async throws {
        let harness = try await ServerHarness(idleTimeout: 1, requestTimeout: 2)
        let client = try RawClient(port: harness.port, receiveTimeout: 0.2)
        let (closedAfter, received) = Self.trickle(client, first: "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
                                                   drip: "a", for: 12)
        XCTAssertNotNil(closedAfter, "a trickling body held its connection 12 s with a 2 s request timeout: \(received)")
        XCTAssertGreaterThan(closedAfter ?? 0, 1, "closed before its deadline")
        await harness.stop()
    }

    /// A head trickling with no idle timeout at all is answered 408 and closed at the request deadline.
    func testATricklingHeadIsAnswered408WithoutAnIdleTimeout() async throws {
        let harness = try await ServerHarness(idleTimeout: nil, requestTimeout: 1)
        let client = try RawClient(port: harness.port, receiveTimeout: 0.2)
        let (closedAfter, received) = Self.trickle(client, first: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Drip: ", drip: "a", for: 10)
        XCTAssertNotNil(closedAfter, "a trickling head held its connection 10 s with a 1 s request timeout")
        XCTAssertTrue(received.hasPrefix("HTTP/1.1 408"), received)
        await harness.stop()
    }

    /// A declared body over the limit is answered 413 before the router sees the request; a chunked body that
    /// grows past it is closed; a small body is fine (the control).
    func testRequestBodiesAreBounded() async throws {
        let harness = try await ServerHarness(requestTimeout: 5, maxRequestBodySize: 16)
        do {
            let client = try RawClient(port: harness.port, receiveTimeout: 5)
            XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"))
            guard case .bytes(let answer) = client.read() else { return XCTFail("no answer to a small body") }
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), answer)
        }
        do {
            let client = try RawClient(port: harness.port, receiveTimeout: 5)
            XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"))
            let answer = client.readAll()
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 413"), answer)
            XCTAssertEqual(client.read(), .closed)
        }
        do {
            let client = try RawClient(port: harness.port, receiveTimeout: 5)
            XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"))
            var closed = false
            for _ in 0..<40 where !closed {
                closed = !client.send("8\r\n12345678\r\n")
                if !closed, case .closed = client.read() { closed = true }
            }
            XCTAssertTrue(closed, "a chunked body past 16 bytes kept its connection")
        }
        let health = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/healthz")!)
        XCTAssertEqual(health.status, 200, "the server still serves")
        await harness.stop()
    }

    /// The time to make a response is not the request's: a slow origin's answer (2.5 s) with a 1 s request
    /// deadline is delivered whole.
    func testAResponseBeingMadeIsNotCutByTheRequestDeadline() async throws {
        let harness = try await ServerHarness(idleTimeout: 1, requestTimeout: 1)
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        harness.origin.route("/slow.jpg", HTTPTestResponse.bytes(jpeg, contentType: "image/jpeg").delayed(by: 2.5))
        let client = try RawClient(port: harness.port, receiveTimeout: 10)
        let query = "url=\(QueryString.escape(harness.source("/slow.jpg")))&w=32"
        XCTAssertTrue(client.send("GET /image?\(query) HTTP/1.1\r\nHost: x\r\n\r\n"))
        guard case .bytes(let answer) = client.read() else { return XCTFail("the response was cut") }
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), String(answer.prefix(200)))
        await harness.stop()
    }
}
