import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An origin that accepts connections and never answers: a listening socket on a loopback address that is never
/// `accept`ed (the kernel completes up to `backlog` handshakes; the requests sent on them are never read).
///
/// - Important: Not thread-safe; one test owns one.
final class StallingOrigin {
    private var descriptor: Int32
    /// The address it listens on (a loopback one).
    let host: String
    let port: Int

    /// Listens on `host` (default 127.0.0.2: another host name than the TestSupport origin's 127.0.0.1, so the
    /// server counts them as two origin hosts).
    init(host: String = "127.0.0.2", backlog: Int32 = 512) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr(host)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EADDRNOTAVAIL)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var local = sockaddr_in()
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.host = host
        port = Int(UInt16(bigEndian: local.sin_port))
    }

    deinit { close() }

    /// The URL of `path` on this origin.
    func url(_ path: String) -> String { "http://\(host):\(port)\(path)" }

    /// Stops listening (the connections in its backlog are reset).
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }
}
