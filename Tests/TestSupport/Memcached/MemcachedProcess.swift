import Foundation

/// A real `memcached` server started by a test on a free loopback port: kill it, restart it on the same port,
/// stop (SIGSTOP) and continue (SIGCONT) it.
///
/// Tests turn `NotInstalled` into an `XCTSkip` with its message (`make test-deps` installs `memcached`).
///
/// - Important: Not thread-safe; one owner (the test). `kill()` in `tearDown`.
public final class MemcachedProcess: @unchecked Sendable { // one owner; `process` is replaced only by that owner
    /// Thrown when no `memcached` binary is installed.
    public struct NotInstalled: Error, CustomStringConvertible {
        public var description: String {
            "memcached is not installed (apt-get install memcached, or `make test-deps`): the shared-tier tests need real servers"
        }
    }

    /// Thrown when the server does not accept connections within the deadline.
    public struct NotReady: Error, CustomStringConvertible {
        public let port: Int
        public var description: String { "memcached on 127.0.0.1:\(port) did not accept connections within 5 s" }
    }

    /// The binary (`/usr/bin/memcached`, or the first on `PATH`).
    public static var binary: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates = ["/usr/bin/memcached", "/usr/local/bin/memcached"] + path.split(separator: ":").map { "\($0)/memcached" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The TCP port it listens on (127.0.0.1).
    public let port: Int
    /// `-m`: megabytes of item memory it runs with.
    public let memoryMegabytes: Int
    /// `-I`: its item size limit (e.g. `1m`).
    public let itemSizeLimit: String
    private var process: Process?

    /// `127.0.0.1:<port>`.
    public var address: String { "127.0.0.1:\(port)" }

    private init(port: Int, memoryMegabytes: Int, itemSizeLimit: String) {
        self.port = port
        self.memoryMegabytes = memoryMegabytes
        self.itemSizeLimit = itemSizeLimit
    }

    /// Starts `memcached -l 127.0.0.1 -p <free port> -U 0 -m <memoryMegabytes> -I <itemSizeLimit>` and waits
    /// until it accepts connections.
    public static func start(memoryMegabytes: Int = 16, itemSizeLimit: String = "1m") throws -> MemcachedProcess {
        guard binary != nil else { throw NotInstalled() }
        // A port just bound and released may be taken meanwhile: try a few.
        var lastError: Error = NotReady(port: 0)
        for _ in 0..<5 {
            let server = MemcachedProcess(port: try freePort(), memoryMegabytes: memoryMegabytes, itemSizeLimit: itemSizeLimit)
            do {
                try server.launch()
                return server
            } catch {
                lastError = error
                server.kill()
            }
        }
        throw lastError
    }

    deinit { kill() }

    /// Starts the server again on the same port (after `kill()`), and waits until it accepts connections.
    public func restart() throws {
        kill()
        try launch()
    }

    /// Kills the server (SIGKILL) and waits for it. Idempotent.
    public func kill() {
        guard let process else { return }
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGCONT) // a stopped process must run to die promptly
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        self.process = nil
    }

    /// SIGSTOP: the server keeps its sockets (connections are accepted by the kernel) but answers nothing.
    /// Returns once every thread of the process is stopped (a thread that was running when the signal came may
    /// still answer one request before it stops), or after 2 s.
    public func suspend() {
        guard let process, process.isRunning else { return }
        let pid = process.processIdentifier
        Foundation.kill(pid, SIGSTOP)
        // Poll /proc with a deadline: the kernel gives no notification when a stop completes.
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline, !Self.isStopped(pid) { usleep(1_000) }
    }

    /// Whether every thread of `pid` is in state T (stopped), from /proc/<pid>/task/*/stat.
    static func isStopped(_ pid: pid_t) -> Bool {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks), !threads.isEmpty else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("T")
        }
    }

    /// SIGCONT after `suspend()`.
    public func resume() {
        if let process, process.isRunning { Foundation.kill(process.processIdentifier, SIGCONT) }
    }

    private func launch() throws {
        guard let binary = Self.binary else { throw NotInstalled() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: binary)
        var arguments = ["-l", "127.0.0.1", "-p", "\(port)", "-U", "0", "-m", "\(memoryMegabytes)", "-I", itemSizeLimit, "-t", "2"]
        if getuid() == 0 { arguments += ["-u", "root"] }
        child.arguments = arguments
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        process = child
        // Poll with a deadline: an external process gives no callback when it is ready.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            guard child.isRunning else { break }
            if Self.accepts(port: port) { return }
            usleep(10_000)
        }
        throw NotReady(port: port)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port the kernel just gave to a socket bound to 127.0.0.1:0 (then released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Several `MemcachedProcess`es: a pool for a test.
public enum MemcachedPool {
    /// Starts `count` servers; skip the test with the error's message when `NotInstalled`.
    public static func start(_ count: Int, memoryMegabytes: Int = 16, itemSizeLimit: String = "1m") throws -> [MemcachedProcess] {
        try (0..<count).map { _ in try MemcachedProcess.start(memoryMegabytes: memoryMegabytes, itemSizeLimit: itemSizeLimit) }
    }
}
