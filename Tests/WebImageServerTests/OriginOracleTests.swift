import Fetcher
import Foundation
import TestSupport
import WebImageServerCore
import XCTest

/// The service is no oracle of internal names: a host that does not resolve, one that resolves to an address
/// the source policy refuses, and a refused connection get one answer (502, "origin unreachable"), the cause going
/// to the server's log only. Before, a refused address was 403 "its address is loopback, not public" and a name
/// that did not resolve 502 "Could not resolve host", so anyone could ask whether `db.corp.internal` exists and
/// whether it is loopback, private or link-local.
final class OriginOracleTests: XCTestCase {
    /// The mapping of every such transfer failure: one status, one body; the cause kept for the log.
    func testEveryUnreachableCauseMapsToOneAnswer() {
        let causes: [FetchError] = [
            .connectionFailed(curlCode: 6, errno: 0, message: "Could not resolve host: db.corp.internal"),
            .addressRefused(address: "10.2.3.4", category: .privateUse),
            .addressRefused(address: "127.0.0.1", category: .loopback),
            .addressRefused(address: "169.254.169.254", category: .linkLocal),
            .addressRefused(address: "::ffff:127.0.0.1", category: .loopback),
            .connectionFailed(curlCode: 7, errno: 111, message: "Failed to connect to 10.2.3.4 port 80: Connection refused"),
        ]
        for cause in causes {
            let error = ImageServiceError(cause)
            XCTAssertEqual(error.httpStatus, 502, "\(cause)")
            XCTAssertEqual(error.description, "origin unreachable", "\(cause)")
            guard case .originUnreachable(let reason) = error else { return XCTFail("\(cause) became \(error)") }
            XCTAssertEqual(reason, cause.description, "the cause is kept for the log")
        }
    }

    /// Through real HTTP: a refused address class (a literal, IPv6, a redirect's target) and a refused connection
    /// at an allowed address answer byte for byte the same (but the `Date`).
    func testRefusedAddressesAndRefusedConnectionsLookTheSame() async throws {
        let harness = try await ServerHarness { $0.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }
        harness.origin.route("/to-other-loopback", .redirect(to: "http://127.0.0.2:\(harness.origin.port)/x.jpg"))
        let sources = [
            "http://127.0.0.2:\(harness.origin.port)/x.jpg",          // loopback outside the allowed network
            "http://[::1]:\(harness.origin.port)/x.jpg",              // IPv6 loopback
            harness.source("/to-other-loopback"),                     // a redirect to a refused address
            try HTTPTestServer.refusedURL("/x.jpg").absoluteString,   // allowed, nothing listens: connection refused
        ]
        var answers: [String] = []
        for source in sources {
            let raw = try await ImageServerHostileTests.rawGET(port: harness.port,
                                                                target: "/image?url=\(QueryString.escape(source))")
            let (head, body) = Self.split(raw)
            XCTAssertTrue(head.hasPrefix("HTTP/1.1 502"), "\(source): \(raw)")
            XCTAssertEqual(body, "origin unreachable\n", source)
            answers.append(head.split(separator: "\r\n").filter { !$0.lowercased().hasPrefix("date:") }.joined(separator: "\n")
                           + "\n\n" + body)
        }
        XCTAssertEqual(Set(answers).count, 1, answers.joined(separator: "\n----\n"))
        XCTAssertEqual(harness.origin.requestCount(for: "/x.jpg"), 0)
        await harness.stop()
    }

    static func split(_ response: String) -> (head: String, body: String) {
        guard let range = response.range(of: "\r\n\r\n") else { return (response, "") }
        return (String(response[..<range.lowerBound]), String(response[range.upperBound...]))
    }
}
