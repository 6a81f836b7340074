import Foundation

/// Starts a private nginx on a free loopback port with a `server { … }` block the caller writes, in a folder of
/// its own (config, pid, logs, temp paths), and waits until it accepts connections. Shared by the nginx-based
/// test servers (`NginxOrigin`, `HTTP2TestServer`).
enum NginxLauncher {
    /// Thrown when nginx is missing or does not start; the message says why.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts nginx with `serverBlock(port)` inside its `http { }` and the access log format `logFormat`
    /// (written to `<directory>/access.log`). Returns the port and the running process.
    static func start(in directory: URL, logFormat: String, serverBlock: (Int) -> String) throws -> (port: Int, process: Process) {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
            .first(where: FileManager.default.isExecutableFile) else {
            throw Unavailable(description: "nginx not found (install it with `make test-deps`)")
        }
        let port = try HTTPTestServer.refusedURL().port ?? 0
        let root = directory.path
        let config = """
        daemon off;
        master_process off;
        pid \(root)/nginx.pid;
        error_log \(root)/error.log warn;
        events { worker_connections 256; }
        http {
            log_format custom '\(logFormat)';
            access_log \(root)/access.log custom;
            default_type application/octet-stream;
            client_body_temp_path \(root)/body;
            proxy_temp_path \(root)/proxy;
            fastcgi_temp_path \(root)/fastcgi;
            uwsgi_temp_path \(root)/uwsgi;
            scgi_temp_path \(root)/scgi;
            \(serverBlock(port))
        }
        """
        let configURL = directory.appendingPathComponent("nginx.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", root, "-c", configURL.path, "-e", "\(root)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !accepts(port: port) {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: "\(root)/error.log", encoding: .utf8)) ?? ""
                if process.isRunning { process.terminate() }
                throw Unavailable(description: "nginx did not start: \(log)")
            }
            usleep(10_000)
        }
        return (port, process)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` succeeds.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
