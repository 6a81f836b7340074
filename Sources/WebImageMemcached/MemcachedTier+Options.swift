import KVCache

extension MemcachedTier {
    /// How a `MemcachedTier` talks to its pool.
    ///
    /// The defaults are chosen from what libmemcached 1.1.4 does by itself: its 4 s connect and 5 s poll
    /// timeouts made every request to a hung server take 5 s, so both are tens of milliseconds here; a server
    /// that times out opens a circuit breaker (libmemcached never ejects for timeouts); auto-eject is on with
    /// the only settings that let a restarted server back in (failure limit 2, retry 1 s, dead timeout > 0).
    ///
    /// - Important: A value type; thread-safe.
    public struct Options: Sendable, Hashable {
        /// Key scheme: namespace and format version. Default `webimage`, version 1.
        public var keys: RemoteCacheKey = .standard
        /// Connect timeout in milliseconds. Default 50.
        public var connectTimeoutMilliseconds = 50
        /// Poll (send/receive) timeout in milliseconds: the most a hung server adds to a request. Default 50.
        public var pollTimeoutMilliseconds = 50
        /// Time to live of stored values in seconds, when a store gives none; 0 = until evicted. Default
        /// 7 days.
        public var defaultTimeToLive = 7 * 24 * 60 * 60
        /// The servers' item size limit in bytes (`memcached -I`; 1 MB by default). Values whose item (value +
        /// key + 64 bytes of item header) exceeds it are not sent, and counted in
        /// `statistics.skippedTooLarge`. Default 1,048,576.
        public var itemSizeLimit = 1_048_576
        /// libmemcached handles, each behind its own lock: at most this many operations in flight. An
        /// operation uses a free one on the calling thread, or waits on a handle's serial queue when all are
        /// busy. Default 4.
        public var connections = 4
        /// How long a server's circuit breaker stays open after a timeout or connection failure, in
        /// milliseconds; then one request probes it (success closes the breaker, failure opens it again).
        /// Default 2,000.
        public var breakerOpenMilliseconds = 2_000
        /// libmemcached's `SERVER_FAILURE_LIMIT`: failures before a server is ejected. Default 2.
        public var failureLimit = 2
        /// libmemcached's `RETRY_TIMEOUT` in seconds: how soon a failed server is tried again. Default 1.
        public var retryTimeoutSeconds = 1
        /// libmemcached's `DEAD_TIMEOUT` in seconds: how soon an ejected server is tried again (must be > 0,
        /// or a restarted server stays out for the life of the handle). Default 1.
        public var deadTimeoutSeconds = 1

        /// Default options.
        public init() {}

        /// Checks the ranges; throws the first one out of range.
        func validate() throws(MemcachedTierError) {
            let checks: [(Bool, String)] = [
                (connectTimeoutMilliseconds >= 1, "connectTimeoutMilliseconds must be ≥ 1"),
                (pollTimeoutMilliseconds >= 1, "pollTimeoutMilliseconds must be ≥ 1"),
                (defaultTimeToLive >= 0, "defaultTimeToLive must be ≥ 0"),
                (itemSizeLimit >= 1024, "itemSizeLimit must be ≥ 1024"),
                (connections >= 1 && connections <= 256, "connections must be 1…256"),
                (breakerOpenMilliseconds >= 0, "breakerOpenMilliseconds must be ≥ 0"),
                (failureLimit >= 1, "failureLimit must be ≥ 1"),
                (retryTimeoutSeconds >= 0, "retryTimeoutSeconds must be ≥ 0"),
                (deadTimeoutSeconds >= 1, "deadTimeoutSeconds must be ≥ 1 (0 keeps an ejected server out for good)"),
            ]
            for (ok, message) in checks where !ok { throw .invalidOption(message) }
        }
    }
}
