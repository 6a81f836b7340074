import Foundation
import TestSupport
import WebImageMemcached
import WebImageServerCore
import XCTest

/// Two servers with separate caches and one memcached: the second makes its result from the shared tier.
final class ImageServerFleetTests: XCTestCase {
    func testSecondServerTakesTheSourceFromTheSharedTierNotTheOrigin() async throws {
        let memcached: MemcachedProcess
        do { memcached = try MemcachedProcess.start() } catch let error as MemcachedProcess.NotInstalled {
            throw XCTSkip(error.description)
        }
        defer { memcached.kill() }
        let tier = try MemcachedTier(servers: [memcached.address])
        let first = try await ServerHarness { $0.sharedTier = tier }
        let second = try await ServerHarness { $0.sharedTier = try? MemcachedTier(servers: [memcached.address]) }
        first.origin.route("/photo.jpg", HTTPTestResponse.bytes(try TestImages.gradient(width: 640, height: 480),
                                                                contentType: "image/jpeg"))
        let source = first.source("/photo.jpg")

        // Given the first server made a result from the origin (and handed the bytes to the tier)…
        let made = await first.image([("url", source), ("w", "160"), ("format", "png")])
        XCTAssertEqual(made.status, 200)
        XCTAssertEqual(made.header("X-WebImage-Tier"), "origin")
        XCTAssertTrue(first.service.manager.cache?.waitForPendingSharedWrites() ?? false)

        // …when the second server, with its own empty caches, is asked for another result of the same source…
        let shared = await second.image([("url", source), ("w", "100"), ("format", "jpeg")])

        // …then it decodes the tier's bytes: the origin saw one GET in all.
        XCTAssertEqual(shared.status, 200)
        XCTAssertEqual(shared.header("X-WebImage-Tier"), "original_shared")
        XCTAssertEqual(try shared.decoded().width, 100)
        XCTAssertEqual(first.origin.requestCount(for: "/photo.jpg"), 1)
        XCTAssertEqual(second.service.statistics.originFetches, 0)
        await first.stop()
        await second.stop()
    }
}
