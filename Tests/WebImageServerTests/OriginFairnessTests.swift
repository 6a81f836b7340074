import Foundation
import TestSupport
import WebImageServerCore
import WebImageSync
import XCTest

/// One slow origin cannot stall every source: a per-host share of the transfer slots, a deadline counted from the
/// request's arrival (queued time included), `/healthz` saying when the service is saturated. Before, all sources
/// shared one FIFO of transfers with no deadline while queued: 16 requests to an origin that never answers made
/// every other source wait a whole timeout, 64 made every uncached request 503 for about 40 s while `/healthz`
/// said ok.
final class OriginFairnessTests: XCTestCase {
    /// Waits (polling, with a deadline) until `condition` holds; fails the test if it never does.
    static func waitUntil(_ what: String, within seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                          _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { return XCTFail("never: \(what)", file: file, line: line) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// With 4 transfer slots (1 per host), 12 requests to an origin that never answers hold one slot; a healthy
    /// origin is served while every one of them still waits.
    func testAHealthyOriginIsServedWhileAnotherStalls() async throws {
        let stalling = try StallingOrigin()
        let harness = try await ServerHarness { configuration in
            configuration.maxConcurrentTransfers = 4
            configuration.sourceTimeout = 20
        }
        harness.origin.route("/ok.jpg", .bytes(try TestImages.gradient(width: 64, height: 48), contentType: "image/jpeg"))
        let finished = Tally()
        let stalled = (0..<12).map { index in
            let url = harness.imageURL([("url", stalling.url("/stall\(index).jpg"))])
            return Task { () -> Int in
                let status = await ServerHarness.get(url).status
                _ = finished.next()
                return status
            }
        }
        try await Self.waitUntil("12 requests to the stalling origin in the service") {
            let health = harness.service.health
            return health.activeTransfers == 1 && health.waitingTransfers == 11
        }
        let healthy = await harness.image([("url", harness.source("/ok.jpg")), ("w", "32")])
        XCTAssertEqual(healthy.status, 200)
        XCTAssertEqual(finished.next(), 0, "the healthy origin was served only after the stalled requests ended")
        XCTAssertEqual(harness.service.health.activeTransfers, 1, "the stalling host holds its one slot, no more")
        harness.service.cancelOriginTransfers() // ends the stalled ones now (503) rather than in 20 s
        for task in stalled { _ = await task.value }
        await harness.stop()
        stalling.close()
    }

    /// A request that waits for a slot until its deadline (counted from its arrival) is answered then, never
    /// started: 3 requests to a stalling host with one slot for it and a 2 s deadline all end in about 2 s, with
    /// one transfer, not one after another (6 s, 3 transfers). (The two queued ones, arrived a few milliseconds
    /// after the first, get its slot with less than a tenth of their time left: they are not started either.)
    func testQueuedRequestsPastTheirDeadlineAreAnsweredNotStarted() async throws {
        let stalling = try StallingOrigin()
        let harness = try await ServerHarness { configuration in
            configuration.maxConcurrentTransfers = 4
            configuration.maxConcurrentTransfersPerHost = 1
            configuration.sourceTimeout = 2
        }
        let start = ContinuousClock.now
        let replies = await withTaskGroup(of: ServerHarness.Reply.self) { group in
            for index in 0..<3 {
                let url = harness.imageURL([("url", stalling.url("/stall\(index).jpg"))])
                group.addTask { await ServerHarness.get(url) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - start
        XCTAssertEqual(replies.map(\.status), [504, 504, 504], "the origin timed out for the one started and the two queued")
        XCTAssertEqual(harness.service.statistics.originFetches, 1, "the queued requests were never started")
        XCTAssertLessThan(elapsed, .seconds(4.5), "the queued requests waited past their own deadline")
        XCTAssertEqual(harness.service.health.activeTransfers + harness.service.health.waitingTransfers, 0)
        await harness.stop()
        stalling.close()
    }

    /// Past its queue (`maxQueuedTransfersPerHost`), a host's requests get 503 with `Retry-After` at once, holding
    /// no pipeline slot while they would wait.
    func testAHostsQueueIsBounded() async throws {
        let stalling = try StallingOrigin()
        let harness = try await ServerHarness { configuration in
            configuration.maxConcurrentTransfersPerHost = 1
            configuration.maxQueuedTransfersPerHost = 2
            configuration.sourceTimeout = 20
        }
        let waiting = (0..<3).map { index in
            let url = harness.imageURL([("url", stalling.url("/stall\(index).jpg"))])
            return Task { await ServerHarness.get(url).status }
        }
        try await Self.waitUntil("one transfer and two waiting") {
            let health = harness.service.health
            return health.activeTransfers == 1 && health.waitingTransfers == 2
        }
        let refused = await harness.image([("url", stalling.url("/one-more.jpg"))])
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.header("Retry-After"), "1")
        XCTAssertEqual(harness.service.runningCount, 3, "the refused request gave its pipeline slot back")
        harness.service.cancelOriginTransfers()
        let statuses = await Array(waiting.asyncMap { await $0.value })
        XCTAssertEqual(statuses, [503, 503, 503], "cancelled: answered 503, not left waiting")
        let after = await harness.image([("url", stalling.url("/after.jpg"))])
        XCTAssertEqual(after.status, 503, "nothing starts once the transfers were cancelled (the shutdown's grace)")
        await harness.stop()
        stalling.close()
    }

    /// With one exact allowed host, every transfer goes to it: by default it gets every slot, not a quarter.
    func testASingleAllowedHostGetsEverySlot() async throws {
        let stalling = try StallingOrigin(host: "127.0.0.1")
        let harness = try await ServerHarness { configuration in
            configuration.allowedHosts = ["127.0.0.1"]
            configuration.maxConcurrentTransfers = 4
            configuration.sourceTimeout = 20
        }
        let stalled = (0..<4).map { index in
            let url = harness.imageURL([("url", stalling.url("/stall\(index).jpg"))])
            return Task { await ServerHarness.get(url).status }
        }
        try await Self.waitUntil("four transfers to the one allowed host") { harness.service.health.activeTransfers == 4 }
        XCTAssertEqual(harness.service.health.waitingTransfers, 0)
        harness.service.cancelOriginTransfers()
        for task in stalled { _ = await task.value }
        await harness.stop()
        stalling.close()
    }

    /// `/healthz` is 503 "saturated…" with `Retry-After` while every pipeline is busy, 200 "ok…" before and after.
    func testHealthzReportsSaturation() async throws {
        let stalling = try StallingOrigin()
        let harness = try await ServerHarness { configuration in
            configuration.maxConcurrency = 2
            configuration.sourceTimeout = 20
        }
        let healthz = URL(string: "http://127.0.0.1:\(harness.port)/healthz")!
        let before = try await ImageServerHostileTests.rawGET(port: harness.port, target: "/healthz")
        XCTAssertTrue(before.hasPrefix("HTTP/1.1 200"), before)
        XCTAssertTrue(OriginOracleTests.split(before).body.hasPrefix("ok: pipelines 0/2"), before)
        let stalled = (0..<2).map { index in
            let url = harness.imageURL([("url", stalling.url("/stall\(index).jpg"))])
            return Task { await ServerHarness.get(url).status }
        }
        try await Self.waitUntil("both pipelines busy") { harness.service.runningCount == 2 }
        let during = try await ImageServerHostileTests.rawGET(port: harness.port, target: "/healthz")
        XCTAssertTrue(during.hasPrefix("HTTP/1.1 503"), during)
        XCTAssertTrue(during.lowercased().contains("retry-after: 1"), during)
        XCTAssertTrue(OriginOracleTests.split(during).body.hasPrefix("saturated: pipelines 2/2"), during)
        harness.service.cancelOriginTransfers()
        for task in stalled { _ = await task.value }
        let after = await harness.get(healthz)
        XCTAssertEqual(after.status, 200)
        await harness.stop()
        stalling.close()
    }

    /// The executable: SIGTERM with transfers stalled in flight (a 60 s source timeout) ends within the grace
    /// (`--shutdown-grace 1`) and the cancellation after it, the stalled requests answered 503.
    func testSIGTERMEndsWithinTheGraceWithStalledTransfers() async throws {
        let binary = ImageServerShutdownTests.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let stalling = try StallingOrigin()
        defer { stalling.close() }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-server-grace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--cache", cache.path, "--allow-unsigned",
                             "--allow-network", "127.0.0.0/8", "--source-timeout", "60", "--shutdown-grace", "1",
                             "--log-level", "error"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let exited = expectation(description: "exited")
        process.terminationHandler = { _ in exited.fulfill() }
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let port = try await ServerHarness.listeningPort(out)

        let requests = (0..<4).map { index in
            let url = URL(string: "http://127.0.0.1:\(port)/image?url=\(QueryString.escape(stalling.url("/s\(index).jpg")))")!
            return Task { await ServerHarness.get(url) }
        }
        // Every transfer started (4 per host by default of 16): /healthz says so.
        let healthz = URL(string: "http://127.0.0.1:\(port)/healthz")!
        var body = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !body.contains("origin transfers 4/16"), ContinuousClock.now < deadline {
            body = String(decoding: await ServerHarness.get(healthz).body, as: UTF8.self)
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertTrue(body.contains("origin transfers 4/16"), body)
        kill(process.processIdentifier, SIGTERM)
        await fulfillment(of: [exited], timeout: 15)
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0)
        for request in requests {
            let reply = await request.value
            XCTAssertEqual(reply.status, 503, "a stalled request is answered at the grace's end")
        }
    }
}

extension Sequence {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var values: [T] = []
        for element in self { values.append(try await transform(element)) }
        return values
    }
}
