/// One memcached server of a pool: `host:port`, with an optional weight.
///
/// - Important: A value type; thread-safe.
public struct MemcachedServer: Sendable, Hashable, CustomStringConvertible {
    /// Host name or IP address (IPv6 without brackets).
    public var host: String
    /// TCP port. Default 11211.
    public var port: UInt16
    /// Relative share of the keys (consistent-hashing weight); 0 = equal shares. Default 0.
    public var weight: UInt32

    /// Makes a server.
    public init(host: String, port: UInt16 = 11211, weight: UInt32 = 0) {
        self.host = host
        self.port = port
        self.weight = weight
    }

    /// Parses `host:port` (`[v6addr]:port` for IPv6), or a bare host (port 11211); `nil` when malformed.
    public init?(_ text: String) {
        var host = Substring(text)
        var port: UInt16 = 11211
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = UInt16(rest.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = UInt16(host[host.index(after: colon)...]) else { return nil }
            port = value
            host = host[..<colon]
        }
        let forbidden = host.unicodeScalars.contains { $0.value <= 0x20 || $0 == "/" || $0 == "," }
        guard !host.isEmpty, !forbidden, port > 0 else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
