import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP/1.1 server that misbehaves on purpose, one thread per connection (plain sockets: the soak
/// program must not depend on the test-only NIO server).
///
/// The first path component picks the behaviour: `ok` (the image, `Content-Length`), `slow` (the image in
/// eight pieces 40 ms apart), `reset` (half the image, then a TCP reset), `truncated` (half the image, then a
/// clean close), `garbage` (200 with random bytes), `chunked` (valid chunked encoding), `badchunk` (a chunk
/// size that is not hex), `error` (500, 404 or 503), `hang` (never answers; the client's timeout or
/// cancellation ends it), `badlength` (a `Content-Length` that overflows). Every answer closes the connection.
///
/// - Important: Thread-safe. `stop()` closes the listening socket; connection threads end on their own.
final class MisbehavingServer: Sendable {
    /// The TCP port on 127.0.0.1.
    let port: UInt16
    /// Connections being served now.
    let openConnections = Atomic<Int>(0)
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    private let images: [Data]

    /// Listens on an ephemeral loopback port and starts accepting.
    init(images: [Data]) throws {
        precondition(!images.isEmpty, "the server needs images")
        self.images = images
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SoakError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 256) == 0 else {
            let code = errno
            close(fd)
            throw SoakError.system("bind/listen", code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting (closes the listening socket).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            openConnections.add(1, ordering: .relaxed)
            Thread.detachNewThread { [self] in
                serve(connection)
                close(connection)
                openConnections.subtract(1, ordering: .releasing)
            }
        }
    }

    private func serve(_ fd: Int32) {
        guard let path = readRequestPath(fd) else { return }
        let parts = path.split(separator: "/").map(String.init)
        let kind = parts.first ?? ""
        let number = parts.count > 1 ? Int(parts[1].prefix { $0.isNumber }) ?? 0 : 0
        let image = images[number % images.count]
        let half = image.prefix(image.count / 2)
        switch kind {
        case "ok":
            _ = send(fd, header(200, length: image.count) + image)
        case "slow":
            guard send(fd, header(200, length: image.count)) else { return }
            let piece = max(1, image.count / 8)
            var offset = 0
            while offset < image.count {
                guard send(fd, image[offset..<min(image.count, offset + piece)]) else { return }
                offset += piece
                usleep(40_000)
            }
        case "reset":
            _ = send(fd, header(200, length: image.count) + half)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)   // close() now sends RST
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case "truncated":
            _ = send(fd, header(200, length: image.count) + half)
        case "garbage":
            var generator = SplitMix64(seed: UInt64(number))
            let body = Data((0..<(256 + number * 97 % 60_000)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            _ = send(fd, header(200, length: body.count) + body)
        case "chunked", "badchunk":
            var reply = Data("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8)
            var offset = 0
            while offset < image.count {
                let end = min(image.count, offset + 4096)
                let size = kind == "badchunk" && offset > 0 ? "zz" : String(end - offset, radix: 16)
                reply += Data("\(size)\r\n".utf8) + image[offset..<end] + Data("\r\n".utf8)
                offset = end
            }
            reply += Data("0\r\n\r\n".utf8)
            _ = send(fd, reply)
        case "error":
            let status = [500, 404, 503][number % 3]
            _ = send(fd, header(status, length: 5) + Data("error".utf8))
        case "hang":
            waitForClose(fd, seconds: 60)
        case "badlength":
            _ = send(fd, Data("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\nConnection: close\r\n\r\n".utf8) + half)
        default:
            _ = send(fd, header(404, length: 0))
        }
    }

    private func header(_ status: Int, length: Int) -> Data {
        Data("HTTP/1.1 \(status) X\r\nContent-Type: application/octet-stream\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\n".utf8)
    }

    /// Reads the request head (up to 16 KB) and returns its path, or `nil` on a closed or bad connection.
    private func readRequestPath(_ fd: Int32) -> String? {
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.count < 16_384 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            head += buffer[0..<count]
            if head.count >= 4, String(decoding: head.suffix(4), as: UTF8.self) == "\r\n\r\n" { break }
        }
        let firstLine = String(decoding: head.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let words = firstLine.split(separator: " ")
        return words.count >= 2 ? String(words[1]) : nil
    }

    /// Sends all of `data`; `false` when the client went away (no SIGPIPE).
    private func send(_ fd: Int32, _ data: some DataProtocol) -> Bool {
        let bytes = [UInt8](data)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Blocks until the peer closes the connection or `seconds` pass.
    private func waitForClose(_ fd: Int32, seconds: Int) {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 1024)
        let deadline = Date().addingTimeInterval(Double(seconds))
        while Date() < deadline {
            let ready = poll(&descriptor, 1, 500)
            if ready > 0 {
                if recv(fd, &buffer, buffer.count, 0) <= 0 { return }
            }
        }
    }
}

/// A failure of the soak program's own setup.
enum SoakError: Error, CustomStringConvertible {
    case system(String, Int32)
    case setup(String)

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: errno \(code) (\(String(cString: strerror(code))))"
        case .setup(let message): return message
        }
    }
}

/// SplitMix64: a small deterministic generator.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
