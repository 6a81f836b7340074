import Foundation

/// A remote tier of bytes by key shared by many processes or machines (e.g. a memcached pool): the level
/// after the local disk and before the origin.
///
/// Every operation is asynchronous and never fails the caller: an unreachable server, a timeout, a rejected
/// value — each is a miss (or an unsaved value) for the caller, plus a logged and counted error in
/// `statistics`. A tier is a cache, not a store: a value may vanish at any time.
///
/// Keys are the caller's own strings (any characters, any length); a tier maps them to what its servers
/// accept (`RemoteCacheKey`).
///
/// - Important: Implementations are thread-safe: call from any thread. A completion runs exactly once, either
///   on the calling thread before the call returns (a tier may do the work inline, e.g. `MemcachedTier` when
///   a connection is free) or later on the tier's own threads; never hold a lock across a call that its
///   completion takes too. Keep completions short.
public protocol RemoteCacheTier: AnyObject, Sendable {
    /// Looks `key` up; `completion` receives the bytes, or `nil` for a miss or any failure.
    func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void)

    /// Looks several keys up in as few round trips as the tier can; `completion` receives one optional value
    /// per key of `keys`, aligned with it (`nil`: a miss or a failure). Keys are compared by their bytes: two
    /// keys equal only after Unicode normalisation are two keys.
    func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void)

    /// Stores `value` for `key`, expiring after `timeToLive` seconds (`nil`: the tier's default; 0: never).
    /// `completion`, when given, receives whether the value was stored (`false` for a value over the tier's
    /// item size limit, or any failure).
    func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?)

    /// Removes `key`; `completion`, when given, receives whether the tier answered (a key that was absent
    /// counts as removed).
    func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?)

    /// What the tier has done so far (a snapshot).
    var statistics: RemoteCacheStatistics { get }
}

extension RemoteCacheTier {
    /// The bytes for `key`, or `nil` for a miss or any failure (`value(forKey:completion:)` as `async`).
    public func value(forKey key: String) async -> Data? {
        await withCheckedContinuation { continuation in value(forKey: key) { continuation.resume(returning: $0) } }
    }

    /// The values of `keys`, aligned with them (`values(forKeys:completion:)` as `async`).
    public func values(forKeys keys: [String]) async -> RemoteCacheValues {
        await withCheckedContinuation { continuation in values(forKeys: keys) { continuation.resume(returning: $0) } }
    }

    /// Stores `value` and returns whether it was stored (`setValue(_:forKey:timeToLive:completion:)` as `async`).
    @discardableResult
    public func setValue(_ value: Data, forKey key: String, timeToLive: Int? = nil) async -> Bool {
        await withCheckedContinuation { continuation in
            setValue(value, forKey: key, timeToLive: timeToLive) { continuation.resume(returning: $0) }
        }
    }

    /// Removes `key` and returns whether the tier answered (`removeValue(forKey:completion:)` as `async`).
    @discardableResult
    public func removeValue(forKey key: String) async -> Bool {
        await withCheckedContinuation { continuation in removeValue(forKey: key) { continuation.resume(returning: $0) } }
    }
}

/// Counters of a `RemoteCacheTier` since it was made.
///
/// - Important: A value type; thread-safe.
public struct RemoteCacheStatistics: Sendable, Hashable {
    /// Keys looked up (a multi-get counts each key).
    public var lookups = 0
    /// Lookups that found a value.
    public var hits = 0
    /// Lookups that found nothing (including those that failed or were skipped).
    public var misses = 0
    /// Values stored.
    public var stores = 0
    /// Keys removed.
    public var removals = 0
    /// Failed operations (timeouts, refused connections, server errors): each one was also logged.
    public var errors = 0
    /// Timeouts among `errors`.
    public var timeouts = 0
    /// Values not stored because they exceed the item size limit.
    public var skippedTooLarge = 0
    /// Operations not attempted because their server's circuit breaker was open (a miss, not an error).
    public var skippedUnavailable = 0

    /// Makes counters at zero.
    public init() {}
}
