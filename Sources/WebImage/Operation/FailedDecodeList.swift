import Foundation

/// Images whose decode failed, by memory key (URL key and variant), so requests with `.ignoreFailedURL` fail
/// them at once instead of downloading and decoding again; the decode counterpart of the fetcher's
/// `FailedURLList`, which lists URLs whose transfer failed.
///
/// Per variant: a full-size decode refused by the decode limits says nothing of a thumbnail of the same URL
/// (decoded downsampled, within the limits), nor of its first frame only; each variant is listed when its own
/// decode fails. Entries expire after `expiry` seconds; at most `countLimit` are kept (the oldest go first).
///
/// - Important: Thread-safe (one `Mutex`). Lookups are O(1).
final class FailedDecodeList: Sendable {
    /// Seconds an entry stays listed: 600 s, as the fetcher's `FailedURLList`.
    let expiry: Double
    /// At most this many entries: 10,000, as `FailedURLList`.
    let countLimit: Int
    private let now: @Sendable () -> Double
    private let entries = Mutex<[ImageCacheKey: Double]>([:])

    init(expiry: Double = 600, countLimit: Int = 10_000,
         now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.expiry = expiry
        self.countLimit = max(1, countLimit)
        self.now = now
    }

    /// Whether `key` is listed and not expired.
    func contains(_ key: ImageCacheKey) -> Bool {
        let time = now()
        return entries.withLock { entries in
            guard let listed = entries[key] else { return false }
            if time - listed >= expiry {
                entries.removeValue(forKey: key)
                return false
            }
            return true
        }
    }

    /// Lists `key` now.
    func insert(_ key: ImageCacheKey) {
        let time = now()
        entries.withLock { entries in
            entries[key] = time
            if entries.count > countLimit {
                entries = entries.filter { time - $0.value < expiry }
                while entries.count > countLimit, let oldest = entries.min(by: { $0.value < $1.value }) {
                    entries.removeValue(forKey: oldest.key)
                }
            }
        }
    }

    /// Unlists every key.
    func removeAll() { entries.withLock { $0.removeAll() } }

    /// Listed keys, expired ones not yet dropped included.
    var count: Int { entries.withLock { $0.count } }
}
