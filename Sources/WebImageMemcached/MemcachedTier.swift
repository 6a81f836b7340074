import Dispatch
import Foundation
import KVCache
import Synchronization

/// A shared cache tier on a pool of memcached servers, through libmemcached with consistent (ketama) hashing:
/// the level a fleet of workers shares after their own memory and disk caches.
///
/// ```swift
/// let tier = try MemcachedTier(servers: ["10.0.0.5:11211", "10.0.0.6:11211", "10.0.0.7:11211"])
/// let cache = try ImageCache(path: "/var/cache/thumbs", sharedTier: tier)
/// let manager = ImageManager(cache: cache)          // memory → disk → memcached → origin
/// ```
///
/// Keys are mapped by `Options.keys` (`<namespace>:v<version>:<md5 of the key>`), so any cache key works.
/// Every failure is a miss for the caller plus a logged, counted error (`statistics`): a dead server
/// (connection refused) is ejected by libmemcached and re-admitted by itself after `deadTimeoutSeconds`; a
/// hung one costs at most `pollTimeoutMilliseconds`, then its circuit breaker sends its keys straight to a
/// miss for `breakerOpenMilliseconds` before one request probes it again. With one of N servers gone, about
/// 1/N of the keys miss; the others stay where they are.
///
/// - Important: Thread-safe: call from any thread. The tier has `Options.connections` libmemcached handles,
///   each behind a lock (handles are not thread-safe). An operation runs on the calling thread when a handle
///   is free at once — it then blocks the caller for the round trip (at most `pollTimeoutMilliseconds` for a
///   hung server, once per breaker window) and its completion runs on the calling thread before the call
///   returns; when every handle is busy, it is queued on one of the tier's serial queues and its completion
///   runs there. Either way a completion runs exactly once, holding no lock of the tier: it may call the tier
///   again. Such calls nest on the stack up to 8 deep on one thread; a deeper one runs right after the
///   outermost completion returns, on the same thread, before the outermost call returns — so a chain of any
///   length uses bounded stack, and a completion must not wait for the completion of a call it makes. Keep
///   completions short. No TLS (libmemcached has none) and no persistence: put the pool on a
///   trusted network, and treat it as a cache — a lost server only makes its share of the keys cold.
public final class MemcachedTier: RemoteCacheTier {
    /// The servers, in the order given (the index used by `serverStates`).
    public let servers: [MemcachedServer]
    /// The options the tier was made with.
    public let options: Options

    private let lanes: [MemcachedLane]
    private let nextLane = Atomic<Int>(0)
    private let counters = Mutex(RemoteCacheStatistics())
    let breaker: CircuitBreaker

    /// Connects lazily to `servers` (`"host:port"` strings; `[v6]:port` for IPv6).
    ///
    /// - Throws: `MemcachedTierError` for an empty list, a malformed server or an option out of range. An
    ///   unreachable server is not an error here: it is a miss later.
    public convenience init(servers: [String], options: Options = Options()) throws(MemcachedTierError) {
        var parsed: [MemcachedServer] = []
        for text in servers {
            guard let server = MemcachedServer(text.trimmingCharacters(in: .whitespaces)) else { throw .invalidServer(text) }
            parsed.append(server)
        }
        try self.init(servers: parsed, options: options)
    }

    /// Connects lazily to `servers`.
    ///
    /// - Throws: `MemcachedTierError` for an empty list or an option out of range; `.configuration` when
    ///   libmemcached refuses a server.
    public init(servers: [MemcachedServer], options: Options = Options()) throws(MemcachedTierError) {
        guard !servers.isEmpty else { throw .noServers }
        try options.validate()
        self.servers = servers
        self.options = options
        breaker = CircuitBreaker(servers: servers.count, openMilliseconds: options.breakerOpenMilliseconds)
        // Make one handle now so a configuration libmemcached refuses is an error of `init`, not a log line.
        _ = try MemcachedHandle(servers: servers, options: options)
        lanes = (0..<options.connections).map { index in
            MemcachedLane(index: index) { () throws(MemcachedTierError) -> MemcachedHandle in
                try MemcachedHandle(servers: servers, options: options)
            }
        }
    }

    /// Counters since the tier was made.
    public var statistics: RemoteCacheStatistics { counters.withLock { $0 } }

    /// The breaker state of each server (in `servers` order).
    public var serverStates: [MemcachedServerState] {
        zip(servers, breaker.snapshot).map { server, entry in
            MemcachedServerState(server: server, isBreakerOpen: entry.isOpen, breakerOpenings: entry.openings,
                                 failures: entry.failures)
        }
    }

    /// The server `key` maps to now (consistent hashing, after any ejection), or `nil` when none is available.
    ///
    /// - Important: Waits for one of the tier's handles when all are busy (never longer than the operation
    ///   using it); safe to call from a completion of this tier.
    public func server(forKey key: String) -> MemcachedServer? {
        let remote = options.keys.remoteKey(for: key)
        let work = { (handle: MemcachedHandle?, _: inout LogBuffer) -> Int in handle?.serverIndex(remote) ?? -1 }
        let found = lanes.lazy.compactMap { $0.runIfIdle(work) }.first ?? lanes[0].runWaiting(work)
        return servers.indices.contains(found) ? servers[found] : nil
    }

    /// Runs `work` with a handle, then `then` with its result, outside any lock: on the calling thread, before
    /// returning, in the first lane free now (so light traffic reuses one warm connection and saves two thread
    /// hops); when every handle is busy, on a lane's queue (the first without queued work, else the next in
    /// turn), and `then` runs there. A call made from a completion nested `InlineNesting.limit` deep on this
    /// thread waits until the outermost completion returns (on this thread), so chains use bounded stack.
    private func execute<T: Sendable>(_ work: @escaping @Sendable (MemcachedHandle?, inout LogBuffer) -> T,
                                      then: @escaping @Sendable (T) -> Void) {
        InlineNesting.run { [self] in
            for lane in lanes {
                if let result = lane.runIfIdle(work) { return then(result) }
            }
            lane().run(work, then: then)
        }
    }

    /// The first lane without queued work, else the next in turn.
    private func lane() -> MemcachedLane {
        for lane in lanes where lane.pending.load(ordering: .relaxed) == 0 { return lane }
        return lanes[nextLane.wrappingAdd(1, ordering: .relaxed).oldValue % lanes.count]
    }

    private func count(_ update: (inout RemoteCacheStatistics) -> Void) {
        counters.withLock { update(&$0) }
    }

    // MARK: RemoteCacheTier

    /// Looks `key` up on the server it hashes to; a miss for an absent key, an open breaker or any failure.
    public func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) {
        let remote = options.keys.remoteKey(for: key)
        execute({ [self] handle, log in
            let data = perform(handle, remote, "get", &log) { handle in handle.get(remote) }
            count { s in
                s.lookups += 1
                if data != nil { s.hits += 1 } else { s.misses += 1 }
            }
            return data
        }, then: completion)
    }

    /// Looks `keys` up with one `memcached_mget` per server they map to, one server after the other (keys whose
    /// server's breaker is open are left out: misses). The result is aligned with `keys`; keys are compared by
    /// their bytes (each has its own remote key, the MD5 of its bytes). One request per server lets a timeout
    /// be charged to the server that timed out: a hung server opens its breaker, as with single gets.
    public func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
        guard !keys.isEmpty else { return InlineNesting.run { completion(.misses([])) } }
        let remotes = keys.map { options.keys.remoteKey(for: $0) }
        // Remote keys are ASCII (`<namespace>:v<version>:<md5 hex>`), so `String ==` on them is byte equality,
        // and keys with distinct bytes have distinct remote keys.
        var seen = Set<String>()
        let distinct = remotes.filter { seen.insert($0).inserted }
        execute({ [self] handle, log in
            var found: [String: Data] = [:]
            if let handle {
                var byServer: [Int: [String]] = [:]
                for remote in distinct { byServer[handle.serverIndex(remote), default: []].append(remote) }
                for (server, group) in byServer.sorted(by: { $0.key < $1.key }) {
                    guard breaker.permission(for: server) != .denied else {
                        count { $0.skippedUnavailable += group.count }
                        continue
                    }
                    let (values, status) = handle.multiGet(group)
                    for remote in group { if let value = values[remote] { found[remote] = value } }
                    report(status, handle: handle, operation: "mget", server: server, &log)
                }
            }
            count { s in
                s.lookups += distinct.count
                s.hits += found.count
                s.misses += distinct.count - found.count
            }
            return RemoteCacheValues(requestedKeys: keys, values: remotes.map { found[$0] })
        }, then: completion)
    }

    /// Stores `value` (skipped and counted when its item exceeds `Options.itemSizeLimit`).
    public func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
        let remote = options.keys.remoteKey(for: key)
        guard value.count + remote.utf8.count + 64 <= options.itemSizeLimit else {
            count { $0.skippedTooLarge += 1 }
            memcachedLog.debug("value over the item size limit not stored",
                               metadata: ["bytes": "\(value.count)", "limit": "\(options.itemSizeLimit)"])
            InlineNesting.run { completion?(false) }
            return
        }
        let ttl = Self.expiration(seconds: timeToLive ?? options.defaultTimeToLive)
        execute({ [self] handle, log in
            let stored = perform(handle, remote, "set", &log) { handle in
                let status = handle.set(remote, value, timeToLive: ttl)
                return (true, status)
            } ?? false
            if stored { count { $0.stores += 1 } }
            return stored
        }, then: { stored in completion?(stored) })
    }

    /// Removes `key` (an absent key counts as removed).
    public func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) {
        let remote = options.keys.remoteKey(for: key)
        execute({ [self] handle, log in
            let answered = perform(handle, remote, "delete", missIsSuccess: true, &log) { handle in
                (true, handle.delete(remote))
            } ?? false
            if answered { count { $0.removals += 1 } }
            return answered
        }, then: { answered in completion?(answered) })
    }

    // MARK: Internals

    /// memcached reads a time to live over 30 days as an absolute Unix time: convert longer ones.
    static func expiration(seconds: Int) -> Int {
        guard seconds > 30 * 24 * 60 * 60 else { return max(0, seconds) }
        return Int(Date().timeIntervalSince1970) + seconds
    }

    /// Runs one single-key call through the key's server breaker: `nil` when skipped or failed (recorded),
    /// the call's result on success; a miss gives `nil` too (or success with `missIsSuccess`).
    private func perform<T>(_ handle: MemcachedHandle?, _ remote: String, _ operation: String, missIsSuccess: Bool = false,
                            _ log: inout LogBuffer, _ call: (MemcachedHandle) -> (T?, MemcachedHandle.Status)) -> T? {
        guard let handle else {
            count { $0.errors += 1 }
            return nil
        }
        let server = handle.serverIndex(remote)
        guard breaker.permission(for: server) != .denied else {
            count { $0.skippedUnavailable += 1 }
            return nil
        }
        let (result, status) = call(handle)
        report(status, handle: handle, operation: operation, server: server, &log)
        switch status.kind {
        case .ok: return result
        case .miss: return missIsSuccess ? result : nil
        default: return nil
        }
    }

    /// Reports the outcome of a call sent to `server` to its breaker — every outcome, so a half-open probe always
    /// closes or reopens it: a timeout or an unreachable server opens the breaker; any answer (a value, a miss,
    /// `E2BIG`, a server or protocol error) closes it, the server being alive. A failure is also counted and
    /// logged (into `log`).
    private func report(_ status: MemcachedHandle.Status, handle: MemcachedHandle, operation: String, server: Int,
                        _ log: inout LogBuffer) {
        let kind = status.kind
        let unreachable = kind == .timeout || kind == .unavailable
        if !unreachable, breaker.recordSuccess(server) { logBreaker(closed: server, &log) }
        switch kind {
        case .ok, .miss: return
        case .tooLarge:
            count { $0.skippedTooLarge += 1 }
            return
        case .timeout, .unavailable, .error: break
        }
        count { s in
            s.errors += 1
            if kind == .timeout { s.timeouts += 1 }
        }
        let name = servers.indices.contains(server) ? servers[server].description : "pool"
        log.add(.warning, "memcached \(operation) failed; treated as a miss",
                metadata: ["server": "\(name)", "error": "\(handle.message(status))"])
        if unreachable, breaker.recordFailure(server) {
            log.add(.warning, "memcached server breaker opened", metadata: [
                "server": "\(name)", "milliseconds": "\(options.breakerOpenMilliseconds)",
            ])
        }
    }

    private func logBreaker(closed server: Int, _ log: inout LogBuffer) {
        log.add(.notice, "memcached server breaker closed", metadata: ["server": "\(servers[server])"])
    }
}

/// The health of one server of a `MemcachedTier`, as its circuit breaker sees it.
///
/// - Important: A value type; thread-safe.
public struct MemcachedServerState: Sendable, Hashable {
    /// The server.
    public var server: MemcachedServer
    /// Whether its breaker is open now (its keys are misses without a request).
    public var isBreakerOpen: Bool
    /// How many times its breaker has opened.
    public var breakerOpenings: Int
    /// Timeouts and connection failures seen.
    public var failures: Int
}
