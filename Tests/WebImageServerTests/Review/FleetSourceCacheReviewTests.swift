import Foundation
import TestSupport
import WebImageMemcached
import WebImageServerCore
import XCTest

/// Review: a 200 that is not an image (an error page) is handed to the fleet's shared tier before anything
/// decodes it; every other server then takes it from memcached and answers 415 however soon the origin
/// recovers, without asking the origin — a fleet-wide poisoning by one bad answer.
final class FleetSourceCacheReviewTests: XCTestCase {
    func testANonImageAnswerDoesNotPoisonTheFleet() async throws {
        let memcached: MemcachedProcess
        do { memcached = try MemcachedProcess.start() } catch let error as MemcachedProcess.NotInstalled {
            throw XCTSkip(error.description)
        }
        defer { memcached.kill() }
        let first = try await ServerHarness { $0.sharedTier = try? MemcachedTier(servers: [memcached.address]) }
        let second = try await ServerHarness { $0.sharedTier = try? MemcachedTier(servers: [memcached.address]) }
        let jpeg = try TestImages.gradient(width: 64, height: 48)
        let answered = Tally()
        first.origin.route("/photo.jpg") { _ in
            answered.next() == 0
                ? .bytes(Array("<html>502 Bad Gateway</html>".utf8), contentType: "text/html")
                : .bytes(jpeg, contentType: "image/jpeg")
        }
        let source = first.source("/photo.jpg")
        let bad = await first.image([("url", source), ("w", "32")])
        XCTAssertEqual(bad.status, 415)
        XCTAssertTrue(first.service.manager.cache?.waitForPendingSharedWrites() ?? false)

        // The origin has recovered; another server is asked for the same source.
        let other = await second.image([("url", source), ("w", "32")])
        XCTAssertEqual(other.status, 200, "the error page came from the shared tier")
        XCTAssertEqual(first.origin.requestCount(for: "/photo.jpg"), 2, "the origin was asked again")
        await first.stop()
        await second.stop()
    }
}
