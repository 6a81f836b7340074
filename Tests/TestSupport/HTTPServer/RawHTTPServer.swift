import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP origin that answers each request with exactly the bytes a test gives: the response
/// head as an attacker writes it (`Location : x`, a status line between fields, folded lines, `Cache-Control: =`),
/// which a real HTTP encoder (the NIO-based `HTTPTestServer`) refuses to produce.
///
/// One connection per request (`Connection: close` semantics: the server closes after writing). The handler
/// gets the request's path and whole head and returns the raw response bytes. Every request head is recorded.
///
/// - Important: Thread-safe. The accept loop runs on a thread of its own until `shutdown()`.
public final class RawHTTPServer: @unchecked Sendable { // state behind `state`; the socket is only closed once
    /// The port on 127.0.0.1.
    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (_ path: String, _ head: String) -> [UInt8]
    /// Set by `init(streaming:)`: writes the response itself, piece by piece.
    private let streamer: (@Sendable (_ path: String, _ head: String, _ send: ([UInt8]) -> Bool) -> Void)?
    private let state = Mutex<(heads: [String], isStopped: Bool)>(([], false))
    private let stopped = DispatchSemaphore(value: 0)

    /// Starts a server on an ephemeral loopback port.
    public convenience init(handler: @escaping @Sendable (_ path: String, _ head: String) -> [UInt8]) throws {
        try self.init(handler: handler, streamer: nil)
    }

    /// A server whose handler writes the response itself through `send` (false once the client has gone), for
    /// origins that drip a body or never end it. The connection closes when the handler returns.
    public convenience init(streaming: @escaping @Sendable (_ path: String, _ head: String, _ send: ([UInt8]) -> Bool) -> Void) throws {
        try self.init(handler: { _, _ in [] }, streamer: streaming)
    }

    private init(handler: @escaping @Sendable (_ path: String, _ head: String) -> [UInt8],
                 streamer: (@Sendable (_ path: String, _ head: String, _ send: ([UInt8]) -> Bool) -> Void)?) throws {
        self.handler = handler
        self.streamer = streamer
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let failure = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EADDRINUSE)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "RawHTTPServer"
        thread.start()
    }

    /// A server answering from a table of path → raw response (404 for other paths).
    public convenience init(responses: [String: String]) throws {
        try self.init { path, _ in
            Array((responses[path] ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n").utf8)
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every request head received so far, in order.
    public var requestHeads: [String] { state.withLock { $0.heads } }

    /// The request heads whose request line names `path`.
    public func requestHeads(for path: String) -> [String] {
        requestHeads.filter { $0.hasPrefix("GET \(path) ") || $0.hasPrefix("HEAD \(path) ") }
    }

    /// Stops accepting and waits for the accept loop to end.
    public func shutdown() {
        let wasStopped = state.withLock { state -> Bool in
            defer { state.isStopped = true }
            return state.isStopped
        }
        guard !wasStopped else { return }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        stopped.wait()
        close(listener)
    }

    deinit { shutdown() }

    private func acceptLoop() {
        defer { stopped.signal() }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            if state.withLock({ $0.isStopped }) {
                close(connection)
                return
            }
            serve(connection)
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let end = Array("\r\n\r\n".utf8)
        while received.count < 65_536, !received.containsSequence(end) {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
        }
        let head = String(decoding: received, as: UTF8.self)
        state.withLock { $0.heads.append(head) }
        let requestLine = head.prefix { $0 != "\r" }.split(separator: " ")
        let path = requestLine.count >= 2 ? String(requestLine[1]) : "/"
        let write: ([UInt8]) -> Bool = { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
        if let streamer {
            streamer(path, head, write)
        } else if !write(handler(path, head)) {
            return
        }
        Glibc.shutdown(connection, Int32(SHUT_WR))
    }
}

private extension Array where Element == UInt8 {
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
