@testable import Fetcher
import Foundation
import TestSupport
import XCTest

/// Two timeouts: `inactivityTimeout` ends a stalled transfer, `timeout` is a deadline on the whole one. A large
/// image on a slow but flowing link used to fail at the (then 15 s) whole-transfer timeout while bytes flowed.
final class InactivityTimeoutTests: FetchTestCase {
    private let size = 20 << 20

    /// 20 MB in 512 KB pieces every 100 ms (about 4 s): longer than the inactivity timeout, never idle that long.
    func testASlowButFlowingTransferFinishes() {
        server.route("/slow", .drip(testPayload(size), chunk: 512 << 10, interval: 0.1))
        var request = self.request("/slow", timeout: 60)
        request.inactivityTimeout = 2
        request.maximumResponseSize = Int64(size)
        let events = fetchAndWait(request, on: queue, timeout: 30)
        XCTAssertEqual(events.body?.count, size, "\(String(describing: events.error))")
    }

    /// The same transfer under a 2 s deadline: a deadline is not an inactivity timeout.
    func testTheDeadlineStillEndsAFlowingTransfer() {
        server.route("/slow", .drip(testPayload(size), chunk: 512 << 10, interval: 0.1))
        var request = self.request("/slow", timeout: 2)
        request.inactivityTimeout = 2
        request.maximumResponseSize = Int64(size)
        guard case .timedOut? = fetchAndWait(request, on: queue, timeout: 30).error else { return XCTFail("deadline") }
    }

    /// 1 MB, then nothing: stopped at the inactivity timeout, long before the deadline.
    func testAStalledTransferStopsAtTheInactivityTimeout() {
        server.route("/stall", .drip(testPayload(2 << 20), chunk: 1 << 20, interval: 60))
        var request = self.request("/stall", timeout: 60)
        request.inactivityTimeout = 2
        let start = ContinuousClock.now
        let events = fetchAndWait(request, on: queue, timeout: 30)
        let elapsed = ContinuousClock.now - start
        guard case .timedOut? = events.error else { return XCTFail("got \(String(describing: events.result))") }
        XCTAssertLessThan(elapsed, .seconds(10), "ended by the 2 s inactivity timeout, not the 60 s deadline")
        XCTAssertGreaterThanOrEqual(events.progress.last ?? 0, 1 << 20, "the first megabyte arrived")
    }

    /// A server that accepts and never answers is a stall too.
    func testASilentServerStopsAtTheInactivityTimeout() {
        server.route("/silent", .bytes([1]).delayed(by: 60))
        var request = self.request("/silent", timeout: 60)
        request.inactivityTimeout = 1
        let start = ContinuousClock.now
        guard case .timedOut? = fetchAndWait(request, on: queue, timeout: 30).error else { return XCTFail("silent") }
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
    }
}
