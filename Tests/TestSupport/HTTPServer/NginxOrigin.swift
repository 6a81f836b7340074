import Foundation

/// A real origin for HTTP semantics tests: nginx over plain HTTP on loopback, serving the files the test gives
/// it with the `location` blocks the test writes (`expires 1h;`, `add_header Cache-Control …;`), so what the
/// client sees is what a real server sends (its `Date`, `ETag`, `Last-Modified`, 304s), not what we wrote.
///
///     let origin = try NginxOrigin.start(files: ["a.png": png], locations: "location /a.png { expires 1h; }")
///     defer { origin.shutdown() }
///     origin.accessLog()   // [(status: 200, path: "/a.png")]
///
/// - Important: Not thread-safe; one owner. Requires `nginx` (`make test-deps`); `start` throws when it is
///   missing or does not start.
public final class NginxOrigin {
    /// One access-log line.
    public struct Request: Equatable, Sendable {
        /// The status nginx answered.
        public var status: Int
        /// The request path.
        public var path: String
    }

    /// The port on 127.0.0.1.
    public let port: Int
    private let child: ChildServerProcess

    /// Writes `files` (name → bytes) into a fresh web root and starts nginx with `locations` inside its server
    /// block.
    public static func start(files: [String: Data], locations: String = "") throws -> NginxOrigin {
        try start(files: files, listen: "", locations: locations)
    }

    /// The same over TLS with `ca`'s server certificate; with `requiresClientCertificate`, only clients showing a
    /// certificate signed by `ca` are served (others get nginx's 400). Use `url(_:)` with the `https` scheme:
    /// `tlsURL(_:)`.
    public static func startTLS(files: [String: Data], ca: PrivateCA, requiresClientCertificate: Bool = false) throws -> NginxOrigin {
        var directives = "ssl_certificate \(ca.serverCertificatePath); ssl_certificate_key \(ca.serverKeyPath);"
        if requiresClientCertificate {
            directives += " ssl_client_certificate \(ca.caCertificatePath); ssl_verify_client on;"
        }
        return try start(files: files, listen: " ssl", locations: directives)
    }

    private static func start(files: [String: Data], listen: String, locations: String) throws -> NginxOrigin {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: www.appendingPathComponent(name)) }
        do {
            let (port, process) = try NginxLauncher.start(in: directory, logFormat: "$status $uri") { port in
                "server { listen 127.0.0.1:\(port)\(listen); root \(www.path); \(locations) }"
            }
            return NginxOrigin(port: port, child: ChildServerProcess(process: process, directory: directory))
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    private init(port: Int, child: ChildServerProcess) {
        self.port = port
        self.child = child
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// `https://localhost:<port><path>` (the name the TLS certificate carries; 127.0.0.1 is in it too).
    public func tlsURL(_ path: String) -> URL { URL(string: "https://localhost:\(port)\(path)")! }

    /// The requests nginx has logged so far, in order.
    public func accessLog() throws -> [Request] {
        let text = try String(contentsOf: child.directory.appendingPathComponent("access.log"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let status = Int(fields[0]) else { return nil }
            return Request(status: status, path: String(fields[1]))
        }
    }

    /// Stops nginx and deletes its folder. Idempotent.
    public func shutdown() { child.stop() }

    deinit { shutdown() }
}
