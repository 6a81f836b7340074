import Foundation

/// The HTTP freshness of the originals whose decoded images are in memory, so that `.useHTTPCache` can serve a
/// fresh image from memory (a reused cell shows it at once, without a disk read or a new decode) and still
/// revalidate a stale one.
///
/// - Important: Thread-safe (one lock); bounded: at most `capacity` keys, stale ones dropped first.
final class FreshnessTable: Sendable {
    /// Keys kept at most; past it, stale entries go, then everything (the disk keeps the facts).
    static let capacity = 4_096

    private let policies = Mutex<[String: HTTPCachePolicy]>([:])

    /// Records the policy of `key`'s original (nil forgets it: no freshness known, so no fresh memory hit).
    func record(_ policy: HTTPCachePolicy?, forKey key: String, now: Date = Date()) {
        policies.withLock { table in
            table[key] = policy
            guard table.count > Self.capacity else { return }
            table = table.filter { $0.value.isFresh(at: now) }
            if table.count > Self.capacity { table.removeAll(keepingCapacity: false) }
        }
    }

    /// Whether `key`'s original is known fresh at `now` for a request with `requestHeaders` (asked for only when
    /// the original's response had a `Vary`).
    func isFresh(_ key: String, at now: Date = Date(), requestHeaders: () -> [String: String] = { [:] }) -> Bool {
        guard let policy = policies.withLock({ $0[key] }), policy.isFresh(at: now) else { return false }
        return policy.variedRequestFields == nil || policy.matchesVary(requestHeaders: requestHeaders())
    }

    /// Forgets `key` (removed from the caches), or every key.
    func remove(_ key: String?) {
        policies.withLock { table in
            if let key { table[key] = nil } else { table.removeAll() }
        }
    }

    /// Keys recorded now (for tests).
    var count: Int { policies.withLock { $0.count } }
}
