import Foundation
import TestSupport
import WebImage
import WebImageMemcached
import XCTest

/// `ImageManager`s with separate disk caches sharing one memcached pool (three real servers): memory → disk →
/// shared tier → network.
final class SharedTierPipelineTests: MemcachedPoolTestCase {
    func testSecondManagerIsServedFromTheSharedTierWithTheMetadata() throws {
        // Given an image with validators, loaded by the first manager (one origin GET).
        let png = try patternPNG(seed: 7)
        origin.route("/a.png", HTTPTestResponse.bytes(png, contentType: "image/png").withETag("\"v1\"")
            .withHeader("Cache-Control", "max-age=600"))
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        let first = try manager("first", tier: tier)
        let url = origin.url("/a.png")
        let a = load(url, with: first)
        XCTAssertEqual(a.source, .remote)
        XCTAssertTrue(first.cache?.waitForPendingSharedWrites() ?? false)

        // When a second manager with another disk folder asks for it.
        let second = try manager("second", tier: try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions()))
        let b = load(url, with: second)

        // Then the shared tier serves it: one origin GET in all, same pixels, and it lands on the second disk
        // with the HTTP validators and freshness.
        XCTAssertEqual(b.source, .sharedCache)
        XCTAssertNil(b.error)
        XCTAssertEqual(origin.requestCount(for: "/a.png"), 1)
        XCTAssertEqual(b.image?.width, 40)
        XCTAssertEqual(b.image?.firstFrame.buffer.packedBytes, a.image?.firstFrame.buffer.packedBytes)
        second.cache?.waitForPendingWrites()
        XCTAssertEqual(try second.cache?.getImageData(forKey: url.absoluteString), png)
        let metadata = try second.cache?.getMetadata(forKey: url.absoluteString)
        XCTAssertEqual(metadata?.http?.etag, "\"v1\"")
        XCTAssertEqual(metadata?.http?.maxAge, 600)
        // A third request on the second manager comes from its own memory, not the tier.
        XCTAssertEqual(load(url, with: second).source, .memoryCache)
        XCTAssertEqual(origin.requestCount(for: "/a.png"), 1)
    }

    func testAnUndecodableSharedEntryIsDroppedAndTheOriginServes() throws {
        let png = try patternPNG(seed: 3)
        origin.route("/c.png", .bytes(png, contentType: "image/png"))
        let url = origin.url("/c.png")
        let tier = try MemcachedTier(servers: servers.map(\.address), options: relaxedOptions())
        // A well-formed envelope around bytes that are no image (a writer with a bug, a truncated copy).
        let garbage = try testEnvelope(key: url.absoluteString, body: Data("not an image".utf8))
        XCTAssertTrue(tier.waitSet(garbage, forKey: url.absoluteString))
        let outcome = load(url, with: try manager("m", tier: tier))
        XCTAssertEqual(outcome.source, .remote)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(origin.requestCount(for: "/c.png"), 1)
        // The bad entry is removed from the tier (asynchronously) and replaced by the origin's bytes.
        let deadline = Date().addingTimeInterval(5)
        var replaced = false
        while Date() < deadline, !replaced {
            replaced = tier.waitValue(forKey: url.absoluteString) != garbage
            if !replaced { usleep(50_000) }
        }
        XCTAssertTrue(replaced, "the undecodable shared entry is dropped")
    }

    func testEverythingWorksWithEveryServerDown() throws {
        var options = MemcachedTier.Options()
        options.connectTimeoutMilliseconds = 50
        options.pollTimeoutMilliseconds = 50
        let tier = try MemcachedTier(servers: servers.map(\.address), options: options)
        for server in servers { server.kill() }
        let urls = try (0..<12).map { index -> URL in
            origin.route("/d\(index).png", .bytes(try patternPNG(seed: UInt8(index)), contentType: "image/png"))
            return origin.url("/d\(index).png")
        }
        let manager = try manager("down", tier: tier)
        for url in urls {
            let outcome = load(url, with: manager)
            XCTAssertNil(outcome.error, "\(url)")
            XCTAssertEqual(outcome.source, .remote)
        }
        XCTAssertTrue(manager.cache?.waitForPendingSharedWrites() ?? false, "failed writes are answered too")
        // A new manager on the same folder: served by the local disk, no new origin request.
        let again = try self.manager("down", tier: tier)
        for url in urls { XCTAssertEqual(load(url, with: again).source, .diskCache) }
        XCTAssertEqual(origin.totalRequestCount, urls.count)
        let stats = tier.statistics
        XCTAssertEqual(stats.hits, 0)
        XCTAssertGreaterThan(stats.errors, 0, "failures are counted")
        XCTAssertEqual(stats.errors + stats.skippedUnavailable, 24, "each lookup and each write failed or was skipped")
    }
}
