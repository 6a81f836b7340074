@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// `TLSOptions` against nginx over TLS with a private CA: trusting the CA instead of turning verification off,
/// pinning the server's key, and showing a client certificate.
final class TLSOptionsTests: XCTestCase {
    private var directory: URL!
    private var thread: NetworkThread!
    private var queue: FetchQueue!
    private var origin: NginxOrigin?
    private let body = Data("pixels".utf8)

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        thread = NetworkThread()
        queue = FetchQueue(thread: thread)
    }

    override func tearDown() {
        queue = nil
        thread.stop()
        thread.join()
        origin?.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    private func start(requiresClientCertificate: Bool = false) throws -> (PrivateCA, NginxOrigin) {
        let ca = try PrivateCA.make(in: directory)
        let server = try NginxOrigin.startTLS(files: ["a.png": body], ca: ca, requiresClientCertificate: requiresClientCertificate)
        origin = server
        return (ca, server)
    }

    private func fetch(_ url: URL, _ tls: TLSOptions) -> Result<FetchResult, FetchError>? {
        var request = FetchRequest(url: url, timeout: 10)
        request.tls = tls
        return fetchAndWait(request, on: queue).result
    }

    func testAPrivateCAIsTrustedWithoutTurningVerificationOff() throws {
        let (ca, server) = try start()
        guard case .failure(.tlsFailure)? = fetch(server.tlsURL("/a.png"), TLSOptions()) else {
            return XCTFail("the system's CAs do not know the private CA")
        }
        guard case .success(let result)? = fetch(server.tlsURL("/a.png"), TLSOptions(caBundlePath: ca.caCertificatePath)) else {
            return XCTFail("trusted through caBundlePath")
        }
        XCTAssertEqual(result.body, body)
        let rehashed = directory.appendingPathComponent("cas")
        try FileManager.default.createDirectory(at: rehashed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: ca.caCertificatePath, toPath: rehashed.appendingPathComponent("ca.pem").path)
        let rehash = Process()
        rehash.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        rehash.arguments = ["rehash", rehashed.path]
        try rehash.run()
        rehash.waitUntilExit()
        guard case .success? = fetch(server.tlsURL("/a.png"), TLSOptions(caDirectoryPath: rehashed.path)) else {
            return XCTFail("trusted through caDirectoryPath")
        }
    }

    func testAPinnedKeyIsRequired() throws {
        let (ca, server) = try start()
        var tls = TLSOptions(caBundlePath: ca.caCertificatePath, pinnedPublicKeyHashes: [ca.serverPublicKeyHash])
        guard case .success? = fetch(server.tlsURL("/a.png"), tls) else { return XCTFail("the right pin") }
        tls.pinnedPublicKeyHashes = [Data(repeating: 7, count: 32).base64EncodedString()]
        guard case .failure(.tlsFailure)? = fetch(server.tlsURL("/a.png"), tls) else { return XCTFail("a wrong pin") }
        tls.pinnedPublicKeyHashes = ["not base64 at all"]
        guard case .failure(.tlsFailure)? = fetch(server.tlsURL("/a.png"), tls) else {
            return XCTFail("a malformed pin pins nothing the server has, never nothing at all")
        }
        // A pin holds even with verification off.
        var request = FetchRequest(url: server.tlsURL("/a.png"), timeout: 10)
        request.allowsInvalidCertificates = true
        request.tls.pinnedPublicKeyHashes = [Data(repeating: 7, count: 32).base64EncodedString()]
        guard case .failure(.tlsFailure)? = fetchAndWait(request, on: queue).result else { return XCTFail("pin without verification") }
        request.tls.pinnedPublicKeyHashes = [ca.serverPublicKeyHash, Data(repeating: 7, count: 32).base64EncodedString()]
        guard case .success? = fetchAndWait(request, on: queue).result else { return XCTFail("one of several pins") }
    }

    func testAClientCertificateIsShown() throws {
        let (ca, server) = try start(requiresClientCertificate: true)
        var tls = TLSOptions(caBundlePath: ca.caCertificatePath)
        guard case .failure(.httpStatus(400, _))? = fetch(server.tlsURL("/a.png"), tls) else {
            return XCTFail("nginx refuses a client without a certificate")
        }
        tls.clientCertificatePath = ca.clientCertificatePath
        tls.clientKeyPath = ca.clientKeyPath
        guard case .success(let result)? = fetch(server.tlsURL("/a.png"), tls) else { return XCTFail("with the certificate") }
        XCTAssertEqual(result.body, body)
    }
}
