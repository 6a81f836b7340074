import Foundation
import TestSupport
import WebImageServerCore
import WebImageServerHummingbird
import XCTest

/// `ImageServer.idleTimeout`: idle and trickling clients are closed; a response being made is not cut.
final class ImageServerIdleTimeoutTests: XCTestCase {
    /// A client that connects and sends nothing is closed after the timeout.
    func testASilentConnectionIsClosed() async throws {
        let harness = try await ServerHarness(idleTimeout: 1)
        let client = try RawClient(port: harness.port, receiveTimeout: 0.5)
        let closedAfter = client.secondsUntilClosed(within: 10)
        XCTAssertNotNil(closedAfter, "a silent connection stayed open 10 s with a 1 s idle timeout")
        XCTAssertGreaterThan(closedAfter ?? 0, 0.5, "closed before its timeout")
        await harness.stop()
    }

    /// A slowloris, one header byte every 200 ms and never the end of the head, is closed about one timeout
    /// after it connected, though bytes keep coming.
    func testATricklingRequestHeadIsClosed() async throws {
        let harness = try await ServerHarness(idleTimeout: 1)
        let client = try RawClient(port: harness.port, receiveTimeout: 0.2)
        XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n"))
        let start = Date()
        var closed = false
        var index = 0
        while !closed, Date().timeIntervalSince(start) < 10 {
            closed = !client.send(index == 0 ? "X-Drip: " : "a") || client.read() == .closed
            index += 1
        }
        XCTAssertTrue(closed, "a trickling request head held its connection for 10 s with a 1 s idle timeout")
        XCTAssertLessThan(Date().timeIntervalSince(start), 6)
        await harness.stop()
    }

    /// A keep-alive connection is served, then closed once idle: its next request never comes.
    func testAnIdleKeepAliveConnectionIsClosedAfterItsResponse() async throws {
        let harness = try await ServerHarness(idleTimeout: 1)
        let client = try RawClient(port: harness.port, receiveTimeout: 0.5)
        XCTAssertTrue(client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        guard case .bytes(let answer) = client.read() else { return XCTFail("no answer to a whole request") }
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), answer)
        XCTAssertNotNil(client.secondsUntilClosed(within: 10), "an idle keep-alive connection stayed open")
        await harness.stop()
    }

    /// A response that takes longer than the timeout to make (a slow origin) is delivered whole.
    func testAResponseBeingMadeIsNotCut() async throws {
        let harness = try await ServerHarness(idleTimeout: 1)
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        harness.origin.route("/slow.jpg", HTTPTestResponse.bytes(jpeg, contentType: "image/jpeg").delayed(by: 2.5))
        let client = try RawClient(port: harness.port, receiveTimeout: 10)
        let query = "url=\(QueryString.escape(harness.source("/slow.jpg")))&w=32"
        XCTAssertTrue(client.send("GET /image?\(query) HTTP/1.1\r\nHost: x\r\n\r\n"))
        guard case .bytes(let answer) = client.read() else { return XCTFail("the response was cut") }
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), String(answer.prefix(200)))
        await harness.stop()
    }

    /// Without a timeout (the control), a silent connection stays open.
    func testWithoutATimeoutASilentConnectionStaysOpen() async throws {
        let harness = try await ServerHarness(idleTimeout: nil)
        let client = try RawClient(port: harness.port, receiveTimeout: 2.5)
        XCTAssertEqual(client.read(), .timedOut)
        await harness.stop()
    }

    /// The values that mean "never" are taken as such; a positive one as given.
    func testTheTimeoutsThatMeanNever() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-idle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ImageServiceConfiguration(cacheDirectory: folder.path)
        configuration.allowsUnsigned = true
        let service = try ImageService(configuration: configuration)
        XCTAssertEqual(ImageServer(service: service).idleTimeout, ImageServer.defaultIdleTimeout)
        XCTAssertEqual(ImageServer(service: service, idleTimeout: 2.5).idleTimeout, 2.5)
        for never in [nil, 0, -1, .nan, .infinity] as [Double?] {
            XCTAssertNil(ImageServer(service: service, idleTimeout: never).idleTimeout, "\(String(describing: never))")
            XCTAssertNil(ImageServer(service: service, requestTimeout: never).requestTimeout, "\(String(describing: never))")
        }
        // A huge timeout is taken (as at most a year), never a trap converting it to nanoseconds.
        _ = ImageServer(service: service, idleTimeout: 1e300, requestTimeout: 1e300).makeServiceGroup()
        XCTAssertEqual(ImageServer(service: service, maxConnections: 0).maxConnections, 1)
        XCTAssertEqual(ImageServer(service: service, maxRequestBodySize: -5).maxRequestBodySize, 0)
        XCTAssertEqual(ImageServer(service: service, shutdownGrace: .nan).shutdownGrace, ImageServer.defaultShutdownGrace)
    }
}
