/// Why a `MemcachedTier` could not be made. Failures of the tier's operations are never thrown: they are
/// misses, logged and counted in `statistics`.
///
/// - Important: A value type; thread-safe.
public enum MemcachedTierError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No server was given.
    case noServers
    /// A server string is not `host:port`.
    case invalidServer(String)
    /// An option is out of range (the message says which).
    case invalidOption(String)
    /// libmemcached refused the configuration (its message).
    case configuration(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .noServers: return "no memcached server given"
        case .invalidServer(let text): return "not a memcached server (host:port): '\(text)'"
        case .invalidOption(let message): return "invalid memcached tier option: \(message)"
        case .configuration(let message): return "libmemcached configuration failed: \(message)"
        }
    }
}
