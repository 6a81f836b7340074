import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import XCTest

/// Coalescing and saturation through real HTTP.
final class ImageServerLoadTests: XCTestCase {
    /// 100 concurrent identical requests: one origin GET, one decode, one encode, 100 identical answers.
    func testHundredIdenticalRequestsMakeOneGETOneDecodeOneEncode() async throws {
        let harness = try await ServerHarness()
        // The origin answers after 0.5 s, so every request arrives while the first is in flight.
        harness.origin.route("/photo.jpg", HTTPTestResponse.bytes(try TestImages.gradient(width: 800, height: 600),
                                                                  contentType: "image/jpeg").delayed(by: 0.5))
        let url = harness.imageURL([("url", harness.source("/photo.jpg")), ("w", "200"), ("h", "100"), ("format", "webp")])
        // A distinct header per request, or the client's own fetcher would merge them before the server.
        let replies = await withTaskGroup(of: ServerHarness.Reply.self) { group in
            for index in 0..<100 {
                group.addTask { await ServerHarness.get(url, headers: ["X-Test-Request": String(index)]) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(replies.map(\.status), Array(repeating: 200, count: 100))
        XCTAssertEqual(Set(replies.map(\.body)).count, 1)
        let tiers = replies.map { $0.header("X-WebImage-Tier") ?? "none" }
        XCTAssertEqual(tiers.filter { $0 == "origin" }.count, 1, "one leader")
        XCTAssertEqual(tiers.filter { $0 == "coalesced" }.count, 99, "99 joined it")
        XCTAssertEqual(harness.origin.requestCount(for: "/photo.jpg"), 1)
        let statistics = harness.service.statistics
        XCTAssertEqual(statistics.originFetches, 1)
        XCTAssertEqual(statistics.decodes, 1)
        XCTAssertEqual(statistics.encodes, 1)
        // Different results of one source in flight together share the origin GET too.
        harness.origin.route("/other.jpg", HTTPTestResponse.bytes(try TestImages.gradient(width: 300, height: 300),
                                                                  contentType: "image/jpeg").delayed(by: 0.5))
        let variants = await withTaskGroup(of: Int.self) { group in
            for width in [10, 20, 30, 40] {
                let url = harness.imageURL([("url", harness.source("/other.jpg")), ("w", String(width))])
                group.addTask { await ServerHarness.get(url).status }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(variants, [200, 200, 200, 200])
        XCTAssertEqual(harness.origin.requestCount(for: "/other.jpg"), 1)
        await harness.stop()
    }

    /// Past `maxConcurrency` distinct pipelines: 503 with Retry-After, nothing queued; then it recovers.
    func testSaturationGives503AndRecovers() async throws {
        let harness = try await ServerHarness { $0.maxConcurrency = 2; $0.retryAfterSeconds = 2 }
        let bytes = try TestImages.gradient(width: 64, height: 64)
        for index in 0..<6 {
            harness.origin.route("/slow\(index).jpg", HTTPTestResponse.bytes(bytes, contentType: "image/jpeg").delayed(by: 1))
        }
        let replies = await withTaskGroup(of: ServerHarness.Reply.self) { group in
            for index in 0..<6 {
                let url = harness.imageURL([("url", harness.source("/slow\(index).jpg")), ("w", "32")])
                group.addTask { await ServerHarness.get(url) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let statuses = replies.map(\.status)
        XCTAssertEqual(statuses.filter { $0 == 200 }.count, 2, "\(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 503 }.count, 4, "\(statuses)")
        for reply in replies where reply.status == 503 { XCTAssertEqual(reply.header("Retry-After"), "2") }
        XCTAssertEqual(harness.service.statistics.saturated, 4)
        XCTAssertEqual(harness.service.runningCount, 0)
        XCTAssertEqual(harness.origin.totalRequestCount, 2, "refused requests never reached the origin")
        // Recovered: the refused ones succeed now.
        for reply in replies where reply.status == 503 {
            let url = try XCTUnwrap(reply.response?.url)
            do { let status = await ServerHarness.get(url).status; XCTAssertEqual(status, 200) }
        }
        // The metrics saw it.
        let metrics = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/metrics")!)
        let text = String(decoding: metrics.body, as: UTF8.self)
        XCTAssertTrue(text.contains("webimage_requests_total{status=\"503\"}"), text)
        XCTAssertTrue(text.contains("webimage_request_duration_seconds_bucket"), text)
        XCTAssertTrue(text.contains("webimage_origin_fetches_total"), text)
        XCTAssertFalse(text.contains("webimage_cache_hits_total{tier=\"origin\"}"), "made from the origin: not a cache hit")
        let health = await harness.get(URL(string: "http://127.0.0.1:\(harness.port)/healthz")!)
        XCTAssertEqual(health.status, 200)
        await harness.stop()
    }
}
