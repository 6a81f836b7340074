import Foundation
import KVCache
import TestSupport
import WebImageMemcached
import XCTest

/// Review (defect): a server's circuit breaker, once its window has passed, lets exactly one request through as
/// the probe (`CircuitBreaker.permission` sets `isProbing`), and only `recordSuccess`/`recordFailure` clear
/// that flag. `MemcachedTier.perform` reports the probe's outcome for ok, miss, timeout and unavailable only:
/// a probe answered with any other status — `E2BIG` (a server started with a smaller `-I` than
/// `Options.itemSizeLimit`), `SERVER_ERROR out of memory` (`memcached -M`), a protocol error — returns
/// from `record` without either call. The breaker then stays open and probing for good: every later request to
/// that server, healthy again, is denied as a miss without being sent, for the life of the tier. The docs
/// promise the breaker "closes after SIGCONT" (success closes it; failure opens it for another window).
final class MemcachedBreakerProbeReviewTests: MemcachedServerTestCase {
    func testABreakerWhoseProbeIsAnsweredWithAnErrorClosesOnceTheServerAnswersAgain() throws {
        // The server takes items up to 512 KB; the tier is told 1 MB (the default).
        servers = try startMemcached(1, itemSizeLimit: "512k")
        var options = relaxedOptions()
        options.connections = 1
        options.pollTimeoutMilliseconds = 100
        options.breakerOpenMilliseconds = 0 // the first request after the timeout is the probe
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        let small = payload(for: "small", size: 1_000)
        XCTAssertTrue(tier.waitSet(small, forKey: "small"))

        // A hung server: the get times out and opens the breaker.
        servers[0].suspend()
        XCTAssertNil(tier.waitValue(forKey: "small"))
        XCTAssertTrue(tier.serverStates[0].isBreakerOpen, "a timeout opens the breaker")
        servers[0].resume()

        // The probe: a value under the tier's limit but over the server's, answered with E2BIG. (A probe that
        // libmemcached answers "temporarily disabled" — its retry timeout after the failure — reopens the
        // breaker, and the next attempt is the probe again.)
        let deadline = Date().addingTimeInterval(10)
        while tier.statistics.skippedTooLarge == 0 && Date() < deadline {
            XCTAssertFalse(tier.waitSet(payload(for: "large", size: 600_000), forKey: "large"))
        }
        XCTAssertEqual(tier.statistics.skippedTooLarge, 1, "the server answered the probe with E2BIG")

        // The server is healthy: within a few requests (each a new probe at worst) the breaker must close.
        var hit = false
        for _ in 0..<20 where !hit { hit = tier.waitValue(forKey: "small") == small }
        let stats = tier.statistics
        XCTAssertTrue(hit, "20 gets of a stored key on a healthy server all missed: \(stats.skippedUnavailable) skipped as unavailable")
        XCTAssertFalse(tier.serverStates[0].isBreakerOpen, "the breaker stays open (probing) forever: \(tier.serverStates[0])")
    }
}
