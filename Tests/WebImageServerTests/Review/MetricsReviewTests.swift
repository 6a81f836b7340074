import Foundation
import TestSupport
import WebImageServerCore
import XCTest

/// Review: `webimage_cache_hits_total{tier}` must count cache hits only. A result made from bytes fetched from
/// the origin is a miss of every cache; counting it as a "hit" makes every hit ratio computed from the metric
/// (hits / requests) read 100 % on a cold fleet.
final class MetricsReviewTests: XCTestCase {
    func testAnOriginFetchIsNotCountedAsACacheHit() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/cold.jpg", .bytes(try TestImages.gradient(width: 32, height: 24), contentType: "image/jpeg"))
        let cold = await harness.image([("url", harness.source("/cold.jpg")), ("w", "17"), ("format", "jpeg")])
        XCTAssertEqual(cold.status, 200)
        XCTAssertEqual(cold.header("X-WebImage-Tier"), "origin", "control: the result was made from the origin's bytes")
        let warm = await harness.image([("url", harness.source("/cold.jpg")), ("w", "17"), ("format", "jpeg")])
        XCTAssertEqual(warm.header("X-WebImage-Tier"), "result_memory", "control: a real hit")

        let metrics = String(decoding: await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/metrics")!).body,
                             as: UTF8.self)
        let hitLines = metrics.split(separator: "\n").filter { $0.hasPrefix("webimage_cache_hits_total{") }
        XCTAssertTrue(hitLines.contains { $0.contains("tier=\"result_memory\"") }, metrics)
        XCTAssertFalse(hitLines.contains { $0.contains("tier=\"origin\"") },
                       "an origin fetch counted as a cache hit: \(hitLines)")
        await harness.stop()
    }
}
