import Foundation
import Synchronization

/// URLs whose last fetch failed in a way that will repeat (404, 410, redirect loop, oversize, …), so requests
/// that opt in (`FetchRequest.usesFailedURLList`) fail at once instead of hitting the server again. The
/// YYWebImage blacklist, made safe: transient failures (timeouts, connection failures, cancellations, 5xx) are
/// never listed, and entries expire.
///
/// - Important: Thread-safe. Lookups are O(1); expired entries are dropped when looked up or when the list
///   grows past `countLimit`.
public final class FailedURLList: Sendable {
    /// Seconds an entry stays listed. 600 s (10 minutes) by default.
    public let expiry: Double
    /// At most this many entries; the oldest are dropped first. 10,000 by default.
    public let countLimit: Int
    private let now: @Sendable () -> Double
    private let entries = Mutex<[String: Double]>([:]) // URL → time listed

    /// A list whose entries expire after `expiry` seconds. `now` is the clock in seconds (monotonic uptime by
    /// default; tests inject their own).
    public init(expiry: Double = 600, countLimit: Int = 10_000,
                now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.expiry = expiry
        self.countLimit = max(1, countLimit)
        self.now = now
    }

    /// Whether `url` is listed and not expired.
    public func contains(_ url: URL) -> Bool {
        let time = now()
        return entries.withLock { entries in
            guard let listed = entries[url.absoluteString] else { return false }
            if time - listed >= expiry {
                entries.removeValue(forKey: url.absoluteString)
                return false
            }
            return true
        }
    }

    /// Lists `url` now (the manager also calls this for data that cannot be decoded).
    public func insert(_ url: URL) {
        let time = now()
        entries.withLock { entries in
            entries[url.absoluteString] = time
            if entries.count > countLimit {
                entries = entries.filter { time - $0.value < expiry }
                while entries.count > countLimit, let oldest = entries.min(by: { $0.value < $1.value }) {
                    entries.removeValue(forKey: oldest.key)
                }
            }
        }
    }

    /// Records the outcome of a fetch of `url`: lists it for a non-transient error.
    public func record(_ error: FetchError, for url: URL) {
        if !error.isTransient { insert(url) }
    }

    /// Unlists `url`.
    public func remove(_ url: URL) {
        _ = entries.withLock { $0.removeValue(forKey: url.absoluteString) }
    }

    /// Unlists every URL.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// Listed URLs, including expired ones not yet dropped. O(1).
    public var count: Int { entries.withLock { $0.count } }
}
