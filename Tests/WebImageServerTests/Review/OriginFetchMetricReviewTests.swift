import Foundation
import TestSupport
import WebImageServerCore
import WebImageServerHummingbird
import XCTest

/// Review: `webimage_origin_fetches_total` must count every transfer to an origin, as
/// `ImageServiceStatistics.originFetches` ("successful or not") does: an origin answering 404 or 503 to a
/// flood of requests is load on it, and the metric a fleet watches for origin load must see it.
final class OriginFetchMetricReviewTests: XCTestCase {
    /// The value of the unlabelled counter `name` in the Prometheus text of `/metrics` (0 when absent).
    static func counter(_ name: String, harness: ServerHarness) async -> Double {
        let text = String(decoding: await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/metrics")!).body,
                          as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    func testAFailedOriginFetchIsCountedInTheMetric() async throws {
        // Bootstrap swift-metrics before the service makes its metrics (else they are no-ops in a fresh test
        // process: ExecutableMetricsReviewTests), so that this test sees only what it is about.
        _ = ImageServer.registry
        let harness = try await ServerHarness()
        harness.origin.route("/ok.jpg", .bytes(try TestImages.gradient(width: 16, height: 16), contentType: "image/jpeg"))
        harness.origin.route("/missing.jpg", .status(404))
        harness.origin.route("/down.jpg", .status(503))
        let before = await Self.counter("webimage_origin_fetches_total", harness: harness)
        let ok = await harness.image([("url", harness.source("/ok.jpg")), ("w", "9")])
        XCTAssertEqual(ok.status, 200)
        let missing = await harness.image([("url", harness.source("/missing.jpg"))])
        XCTAssertEqual(missing.status, 404)
        let down = await harness.image([("url", harness.source("/down.jpg"))])
        XCTAssertEqual(down.status, 502)
        XCTAssertEqual(harness.origin.totalRequestCount, 3, "control: three transfers reached the origin")
        XCTAssertEqual(harness.service.statistics.originFetches, 3, "control: the statistics count all three")
        let after = await Self.counter("webimage_origin_fetches_total", harness: harness)
        XCTAssertEqual(after - before, 3, "the metric counts transfers to the origin, failed ones too")
        await harness.stop()
    }
}
