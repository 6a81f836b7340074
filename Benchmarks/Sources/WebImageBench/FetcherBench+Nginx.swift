import Foundation

/// nginx on 127.0.0.1 for suite "fetcher": a generated config in the work folder, one worker, keep-alive,
/// sendfile, no access log (unless asked for, to count requests); started as a child process (`daemon off`) and stopped with SIGTERM.
struct NginxServer {
    let port: Int
    private let process: Process

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    static func start(root: URL, www: URL, accessLog: URL? = nil) throws -> NginxServer {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
            .first(where: FileManager.default.isExecutableFile) else {
            throw BenchFailure("nginx not found (make bench installs it)")
        }
        let port = try freePort()
        let temp = root.appendingPathComponent("nginx-temp")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        let config = """
        daemon off;
        worker_processes 1;
        pid \(root.path)/nginx.pid;
        error_log \(root.path)/nginx-error.log warn;
        events { worker_connections 1024; }
        http {
            \(accessLog.map { "access_log \($0.path);" } ?? "access_log off;")
            sendfile on;
            tcp_nopush on;
            keepalive_timeout 60;
            keepalive_requests 1000000;
            default_type application/octet-stream;
            client_body_temp_path \(temp.path)/body;
            proxy_temp_path \(temp.path)/proxy;
            fastcgi_temp_path \(temp.path)/fastcgi;
            uwsgi_temp_path \(temp.path)/uwsgi;
            scgi_temp_path \(temp.path)/scgi;
            server {
                listen 127.0.0.1:\(port);
                root \(www.path);
            }
        }
        """
        let configURL = root.appendingPathComponent("nginx.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", root.path, "-c", configURL.path, "-e", "\(root.path)/nginx-error.log"]
        try process.run()
        // Wait (bounded) until it accepts connections.
        let deadline = Clock.now() + 10
        while !canConnect(port: port) {
            guard process.isRunning, Clock.now() < deadline else {
                process.terminate()
                throw BenchFailure("nginx did not start; see \(root.path)/nginx-error.log")
            }
            usleep(20_000)
        }
        return NginxServer(port: port, process: process)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Bool in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else { throw BenchFailure("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func canConnect(port: Int) -> Bool {
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
