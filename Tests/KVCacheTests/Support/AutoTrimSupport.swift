@testable import KVCache
import Foundation

/// A `DiskCache` at `path` holding `count` one-byte values ("key-0", …) under a count limit of `limit`: over
/// it when `count > limit`, for the tests of the background trim.
func overfilledDiskCache(path: String, count: Int, limit: Int) throws -> DiskCache {
    let cache = try DiskCache(path: path)
    for index in 0..<count { try cache.setObject(Data([UInt8(truncatingIfNeeded: index)]), forKey: "key-\(index)") }
    cache.countLimit = limit
    return cache
}

/// Polls `condition` every 10 ms for up to `seconds`; returns whether it held.
func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
