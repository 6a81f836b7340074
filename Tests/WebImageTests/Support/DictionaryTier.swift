import Foundation
import KVCache
import Synchronization

/// An in-process shared tier (what memcached is to a fleet): a dictionary of envelopes by key.
final class DictionaryTier: RemoteCacheTier {
    private let store = Mutex<[String: Data]>([:])
    func value(forKey key: String, completion: @escaping @Sendable (Data?) -> Void) {
        completion(store.withLock { $0[key] })
    }
    func values(forKeys keys: [String], completion: @escaping @Sendable (RemoteCacheValues) -> Void) {
        let found = store.withLock { table in keys.map { table[$0] } }
        completion(RemoteCacheValues(requestedKeys: keys, values: found))
    }
    func setValue(_ value: Data, forKey key: String, timeToLive: Int?, completion: (@Sendable (Bool) -> Void)?) {
        store.withLock { $0[key] = value }
        completion?(true)
    }
    func removeValue(forKey key: String, completion: (@Sendable (Bool) -> Void)?) {
        store.withLock { $0[key] = nil }
        completion?(true)
    }
    var statistics: RemoteCacheStatistics { RemoteCacheStatistics() }
    func contains(_ key: String) -> Bool { store.withLock { $0[key] != nil } }
    func envelope(_ key: String) -> Data? { store.withLock { $0[key] } }
}
