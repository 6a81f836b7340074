@testable import Fetcher
import TestSupport
import XCTest

/// A test case with its own loopback server, network thread and queue, all torn down after each test; the
/// teardown checks that no transfer is left in flight.
class FetchTestCase: XCTestCase {
    var server: HTTPTestServer!
    var thread: NetworkThread!
    var queue: FetchQueue!

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
        thread = NetworkThread()
        queue = FetchQueue(thread: thread)
    }

    override func tearDown() {
        flush(thread)
        XCTAssertEqual(thread.activity.current, 0, "no transfer left in flight")
        XCTAssertEqual(CurlEasyHandle.liveCount.load(ordering: .relaxed), 0, "every easy handle was freed")
        queue = nil
        thread.stop()
        thread.join()
        server.shutdown()
    }

    func request(_ path: String, timeout: Double = 10) -> FetchRequest {
        FetchRequest(url: server.url(path), timeout: timeout)
    }
}
