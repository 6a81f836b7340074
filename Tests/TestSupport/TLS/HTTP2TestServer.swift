import Foundation

/// nginx on loopback speaking HTTP/2 over TLS (ALPN `h2`, self-signed certificate made at test time), serving
/// the files the test gives it and logging, per request, the TCP connection number and the protocol — so a
/// test can check that transfers really were HTTP/2 and were multiplexed over few connections.
///
///     let server = try HTTP2TestServer.start(files: ["a.bin": data])
///     defer { server.shutdown() }
///     fetch(server.url("/a.bin")) // with invalid certificates allowed
///     server.accessLog()          // [(connection: 1, protocol: "HTTP/2.0", path: "/a.bin")]
///
/// - Important: Not thread-safe; one owner. Requires `nginx` (built with the http_v2 module, as Debian's is)
///   and `openssl`; `make test-deps` installs both. `start` throws `Unavailable` when either is missing.
public final class HTTP2TestServer {
    /// Thrown when nginx or openssl is missing or nginx does not start; the message says why.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// One access-log line.
    public struct Request: Equatable, Sendable {
        /// nginx's connection serial number (`$connection`): equal numbers mean one TCP connection.
        public var connection: Int
        /// `$server_protocol`, e.g. `HTTP/2.0`.
        public var `protocol`: String
        /// The request path.
        public var path: String
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let child: ChildServerProcess

    private init(port: Int, process: Process, directory: URL) {
        self.port = port
        self.child = ChildServerProcess(process: process, directory: directory)
    }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Writes `files` (name → bytes) into a fresh web root and starts nginx on a free port; returns once it
    /// accepts connections. `locations` is nginx configuration put inside the `server` block (none by default);
    /// it may name the port as `$PORT$`.
    public static func start(files: [String: Data], locations: String = "") throws -> HTTP2TestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h2-\(UUID().uuidString)")
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: www.appendingPathComponent(name)) }
        let certificate: SelfSignedCertificate
        do {
            certificate = try SelfSignedCertificate.make(in: directory)
        } catch let error as SelfSignedCertificate.Unavailable {
            throw Unavailable(description: error.description)
        }
        do {
            let (port, process) = try NginxLauncher.start(in: directory, logFormat: "$connection $server_protocol $uri") { port in
                """
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(certificate.certificatePath);
                    ssl_certificate_key \(certificate.keyPath);
                    root \(www.path);
                    \(locations.replacingOccurrences(of: "$PORT$", with: "\(port)"))
                }
                """
            }
            return HTTP2TestServer(port: port, process: process, directory: directory)
        } catch let error as NginxLauncher.Unavailable {
            throw Unavailable(description: error.description)
        }
    }

    /// The requests nginx has logged so far, in order.
    public func accessLog() throws -> [Request] {
        let text = try String(contentsOf: child.directory.appendingPathComponent("access.log"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let connection = Int(fields[0]) else { return nil }
            return Request(connection: connection, protocol: String(fields[1]), path: String(fields[2]))
        }
    }

    /// Stops nginx and deletes its folder. Idempotent.
    public func shutdown() { child.stop() }

    deinit { shutdown() }
}
