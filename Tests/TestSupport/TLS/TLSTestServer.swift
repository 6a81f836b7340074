import Foundation

/// A TLS server on loopback with a self-signed certificate made at test time: `openssl s_server -www` run as a
/// child process (no TLS library is linked into the tests). It answers every GET with `200` and a status page.
///
///     let tls = try TLSTestServer.start()
///     defer { tls.shutdown() }
///     fetch(tls.url) // rejected unless invalid certificates are allowed
///
/// - Important: Not thread-safe; one owner. Requires the `openssl` command (`make test-deps` installs it);
///   `start()` throws `TLSTestServer.Unavailable` when it is missing so tests can skip.
public final class TLSTestServer {
    /// Thrown when `openssl` is missing or fails; the message says why.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// `https://127.0.0.1:<port>/`.
    public var url: URL { URL(string: "https://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }
    private let child: ChildServerProcess

    private init(port: Int, process: Process, directory: URL) {
        self.port = port
        self.child = ChildServerProcess(process: process, directory: directory)
    }

    /// Generates a certificate and key in a temporary folder and starts `openssl s_server` on a free port;
    /// returns once it accepts connections.
    public static func start() throws -> TLSTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate: SelfSignedCertificate
        do {
            certificate = try SelfSignedCertificate.make(in: directory)
        } catch let error as SelfSignedCertificate.Unavailable {
            throw Unavailable(description: error.description)
        }

        let port = try HTTPTestServer.refusedURL().port ?? 0
        let server = Process()
        server.executableURL = URL(fileURLWithPath: certificate.openssl)
        server.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate.certificatePath, "-key", certificate.keyPath, "-www"]
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        server.standardInput = Pipe() // s_server exits on end of input otherwise
        try server.run()
        // s_server prints "ACCEPT" once it listens.
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("ACCEPT") {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty {
                throw Unavailable(description: "openssl s_server exited: \(String(decoding: seen, as: UTF8.self))")
            }
            seen += more
        }
        return TLSTestServer(port: port, process: server, directory: directory)
    }

    /// Stops the child process and deletes the certificate. Idempotent.
    public func shutdown() { child.stop() }

    deinit { shutdown() }
}
