import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Review (defect): #16 and the tier's docs promise that a hung server "costs at most
/// `pollTimeoutMilliseconds`, then its circuit breaker sends its keys straight to a miss for
/// `breakerOpenMilliseconds`" — "once per breaker window, whatever the request rate". `values(forKeys:)`
/// never opens a breaker: when the multi-get fails it records the error with `server: nil` ("which server
/// failed is not known") and only reopens the breakers of probes. A client that looks keys up in batches
/// against a pool with one SIGSTOPped server waits the full poll timeout on every call, for as long as the
/// server hangs.
final class MemcachedMultiGetHungServerReviewTests: MemcachedServerTestCase {
    func testMultiGetsAgainstAHungServerWaitItsTimeoutOncePerBreakerWindow() throws {
        servers = try startMemcached(2)
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 200
        options.pollTimeoutMilliseconds = 200
        options.breakerOpenMilliseconds = 60_000 // one window for the whole test
        options.connections = 1
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let keys = (0..<20).map { "batch-\($0)" }
        for key in keys { XCTAssertTrue(tier.waitSet(payload(for: key, size: 300), forKey: key)) }
        XCTAssertEqual(tier.waitValues(forKeys: keys).count, keys.count, "both servers answer before the hang")

        servers[1].suspend()
        var durations: [Double] = []
        for _ in 0..<8 {
            let start = Date()
            _ = tier.waitValues(forKeys: keys)
            durations.append(Date().timeIntervalSince(start))
        }
        let slow = durations.filter { $0 >= 0.15 }.count
        print("multi-gets with a hung server: " + durations.map { String(format: "%.0f ms", $0 * 1e3) }.joined(separator: ", "))
        XCTAssertLessThanOrEqual(slow, 1,
                                 "\(slow) of 8 multi-gets waited the 200 ms poll timeout (breaker window 60 s): \(tier.serverStates)")
    }
}
