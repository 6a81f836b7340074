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

extension RemoteCacheTier {
    /// `value(forKey:)`, waiting on the calling thread (tests only).
    func waitValue(forKey key: String, timeout: Double = 10) -> Data? {
        let box = Mutex<Data?>(nil)
        let done = DispatchSemaphore(value: 0)
        value(forKey: key) { data in
            box.withLock { $0 = data }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "tier get did not complete")
        return box.withLock { $0 }
    }

    /// `values(forKeys:)`, waiting.
    func waitValues(forKeys keys: [String], timeout: Double = 10) -> [String: Data] {
        let box = Mutex<[String: Data]>([:])
        let done = DispatchSemaphore(value: 0)
        values(forKeys: keys) { found in
            box.withLock { $0 = found }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "tier multi-get did not complete")
        return box.withLock { $0 }
    }

    /// `setValue`, waiting; returns whether it was stored.
    @discardableResult
    func waitSet(_ value: Data, forKey key: String, timeToLive: Int? = nil, timeout: Double = 10) -> Bool {
        let box = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        setValue(value, forKey: key, timeToLive: timeToLive) { stored in
            box.withLock { $0 = stored }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "tier set did not complete")
        return box.withLock { $0 }
    }

    /// `removeValue`, waiting.
    @discardableResult
    func waitRemove(forKey key: String, timeout: Double = 10) -> Bool {
        let box = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        removeValue(forKey: key) { answered in
            box.withLock { $0 = answered }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "tier remove did not complete")
        return box.withLock { $0 }
    }
}

/// Deterministic bytes for `key` (so any hit can be checked).
func payload(for key: String, size: Int) -> Data {
    let seed = key.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 } // FNV-1a
    var generator = SplitMix64(seed: seed &+ UInt64(size))
    return Data((0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
}
