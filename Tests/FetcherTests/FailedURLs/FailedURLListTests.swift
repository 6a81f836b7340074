import Fetcher
import Foundation
import TestSupport
import XCTest

final class FailedURLListTests: FetchTestCase {
    func testNonTransientFailuresAreListedForOptedInRequests() {
        server.route("/boom", .status(503))
        var missing = request("/missing")
        missing.usesFailedURLList = true
        XCTAssertEqual(fetchAndWait(missing, on: queue).error?.httpStatusCode, 404)
        XCTAssertTrue(queue.failedURLs.contains(missing.url))
        XCTAssertEqual(fetchAndWait(missing, on: queue).error, .inFailedURLList(missing.url))
        XCTAssertEqual(server.requestCount(for: "/missing"), 1, "the listed URL was not fetched again")
        XCTAssertEqual(fetchAndWait(request("/missing"), on: queue).error?.httpStatusCode, 404,
                       "a request that did not opt in still goes out")
        XCTAssertEqual(server.requestCount(for: "/missing"), 2)

        var flaky = request("/boom")
        flaky.usesFailedURLList = true
        _ = fetchAndWait(flaky, on: queue)
        XCTAssertFalse(queue.failedURLs.contains(flaky.url), "5xx is transient")
        var slow = request("/late", timeout: 0.2)
        server.route("/late", .bytes([1]).delayed(by: 2))
        slow.usesFailedURLList = true
        XCTAssertEqual(fetchAndWait(slow, on: queue).error, .timedOut(curlCode: 28))
        XCTAssertFalse(queue.failedURLs.contains(slow.url), "timeouts are transient")

        queue.failedURLs.removeAll()
        XCTAssertEqual(queue.failedURLs.count, 0)
        XCTAssertEqual(fetchAndWait(missing, on: queue).error?.httpStatusCode, 404)
    }

    func testEntriesExpire() throws {
        let clock = Mutex(100.0)
        let list = FailedURLList(expiry: 60, now: { clock.withLock { $0 } })
        let url = try XCTUnwrap(URL(string: "https://example.com/a.png"))
        list.insert(url)
        XCTAssertTrue(list.contains(url))
        clock.withLock { $0 += 59 }
        XCTAssertTrue(list.contains(url))
        clock.withLock { $0 += 1 }
        XCTAssertFalse(list.contains(url))
        XCTAssertEqual(list.count, 0)
        list.record(.cancelled, for: url)
        XCTAssertFalse(list.contains(url))
        list.record(.tooManyRedirects(limit: 10), for: url)
        XCTAssertTrue(list.contains(url))
        list.remove(url)
        XCTAssertFalse(list.contains(url))
    }

    func testCountLimitDropsTheOldest() throws {
        let clock = Mutex(0.0)
        let list = FailedURLList(expiry: 1_000, countLimit: 3, now: { clock.withLock { $0 } })
        let urls = try (0..<4).map { try XCTUnwrap(URL(string: "https://example.com/\($0)")) }
        for url in urls {
            clock.withLock { $0 += 1 }
            list.insert(url)
        }
        XCTAssertEqual(list.count, 3)
        XCTAssertFalse(list.contains(urls[0]))
        XCTAssertTrue(list.contains(urls[3]))
    }
}
