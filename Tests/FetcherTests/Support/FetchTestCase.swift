@testable import Fetcher
import TestSupport
import XCTest

/// A test case with its own loopback server, network thread and queue, all torn down after each test; the
/// teardown checks that no transfer is left in flight.
class FetchTestCase: XCTestCase {
    var server: HTTPTestServer!
    private var network: NetworkFixture!
    var thread: NetworkThread! { network?.thread }
    var queue: FetchQueue! { network?.queue }

    override func setUpWithError() throws {
        server = try HTTPTestServer.start()
        network = NetworkFixture()
    }

    override func tearDown() {
        network.tearDown(self)
        network = nil
        server.shutdown()
    }

    func request(_ path: String, timeout: Double = 10) -> FetchRequest {
        FetchRequest(url: server.url(path), timeout: timeout)
    }
}
