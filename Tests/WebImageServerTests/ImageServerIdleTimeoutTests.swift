import Foundation
import TestSupport
import WebImageServerCore
import WebImageServerHummingbird
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client of the server on loopback, byte by byte: what a slow or idle client does to it.
private final class RawClient {
    let descriptor: Int32

    /// Connects to 127.0.0.1:`port`; reads wait at most `receiveTimeout` seconds.
    init(port: Int, receiveTimeout: Double = 10) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(descriptor); throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED) }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int(receiveTimeout.truncatingRemainder(dividingBy: 1) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Sends `text`; returns whether every byte went out (false once the server has closed).
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// What a read saw.
    enum Read: Equatable { case bytes(String), closed, timedOut }

    /// One read: bytes, the server's close (EOF or a reset), or nothing within the receive timeout.
    func read() -> Read {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return .bytes(String(decoding: buffer[0..<count], as: UTF8.self)) }
        if count == 0 || errno == ECONNRESET { return .closed }
        return .timedOut
    }

    /// Reads until the server closes or `seconds` pass; returns the seconds it took, nil when it never closed.
    func secondsUntilClosed(within seconds: Double) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if read() == .closed { return Date().timeIntervalSince(start) }
        }
        return nil
    }
}

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
        }
    }
}
