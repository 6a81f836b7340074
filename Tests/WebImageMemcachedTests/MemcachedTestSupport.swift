import Dispatch
import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Starts `count` real memcached servers, or skips the test when the binary is missing.
func startMemcached(_ count: Int, itemSizeLimit: String = "1m") throws -> [MemcachedProcess] {
    do { return try MemcachedPool.start(count, itemSizeLimit: itemSizeLimit) } catch let error as MemcachedProcess.NotInstalled {
        throw XCTSkip(error.description)
    }
}

/// Options with timeouts generous enough for a loaded 2-core machine (the fault tests set their own).
func relaxedOptions() -> MemcachedTier.Options {
    var options = MemcachedTier.Options()
    options.connectTimeoutMilliseconds = 1_000
    options.pollTimeoutMilliseconds = 1_000
    return options
}

/// Runs an asynchronous call and waits (up to `timeout` seconds) for the value its completion gives.
func waitFor<T: Sendable>(_ what: String, timeout: Double = 10, initial: T,
                          _ call: (@escaping @Sendable (T) -> Void) -> Void) -> T {
    let box = Mutex<T>(initial)
    let done = DispatchSemaphore(value: 0)
    call { value in
        box.withLock { $0 = value }
        done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "\(what) did not complete")
    return box.withLock { $0 }
}

extension RemoteCacheTier {
    /// `value(forKey:)`, waiting on the calling thread (tests only).
    func waitValue(forKey key: String) -> Data? {
        waitFor("tier get", initial: nil) { value(forKey: key, completion: $0) }
    }

    /// `values(forKeys:)`, waiting.
    func waitValues(forKeys keys: [String]) -> RemoteCacheValues {
        waitFor("tier multi-get", initial: .misses(keys)) { values(forKeys: keys, completion: $0) }
    }

    /// `setValue`, waiting; returns whether it was stored.
    @discardableResult
    func waitSet(_ value: Data, forKey key: String, timeToLive: Int? = nil) -> Bool {
        waitFor("tier set", initial: false) { setValue(value, forKey: key, timeToLive: timeToLive, completion: $0) }
    }

    /// `removeValue`, waiting.
    @discardableResult
    func waitRemove(forKey key: String) -> Bool {
        waitFor("tier remove", initial: false) { removeValue(forKey: key, completion: $0) }
    }
}

/// Deterministic bytes for `key` (so any hit can be checked).
func payload(for key: String, size: Int) -> Data {
    let seed = key.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 } // FNV-1a
    var generator = SplitMix64(seed: seed &+ UInt64(size))
    return Data((0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
}
