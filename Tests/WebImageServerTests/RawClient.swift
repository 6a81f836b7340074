import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client of a server on 127.0.0.1, byte by byte: what a slow, idle or stuck client does to it.
///
/// - Important: Not thread-safe; one test at a time uses one.
final class RawClient {
    private var descriptor: Int32

    /// Connects to 127.0.0.1:`port`; reads wait at most `receiveTimeout` seconds (nil: forever).
    /// `receiveBufferSize` shrinks the socket's receive buffer first (a client that stops reading fills it fast).
    init(port: Int, receiveTimeout: Double? = 10, receiveBufferSize: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        if var size = receiveBufferSize {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .ECONNREFUSED)
        }
        if let receiveTimeout {
            var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int(receiveTimeout.truncatingRemainder(dividingBy: 1) * 1e6))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Sends `text`; returns whether every byte went out (false once the server has closed).
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// What a read saw.
    enum Read: Equatable { case bytes(String), closed, timedOut }

    /// One read: bytes, the server's close (EOF or a reset), or nothing within the receive timeout.
    func read() -> Read {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return .bytes(String(decoding: buffer[0..<count], as: UTF8.self)) }
        if count == 0 || errno == ECONNRESET { return .closed }
        return .timedOut
    }

    /// Everything the server sends until it closes (or a read times out), as text.
    func readAll() -> String {
        var received = ""
        while case .bytes(let text) = read() { received += text }
        return received
    }

    /// Reads until the server closes or `seconds` pass; returns the seconds it took, nil when it never closed.
    func secondsUntilClosed(within seconds: Double) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if read() == .closed { return Date().timeIntervalSince(start) }
        }
        return nil
    }
}
