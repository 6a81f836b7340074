import TestSupport
import XCTest

/// A test case that starts memcached processes: whatever it put in `servers` is resumed (a test may have
/// SIGSTOPped it) and killed after each test.
class MemcachedServerTestCase: XCTestCase {
    /// The servers of the running test (`startMemcached(_:)`); emptied after each test.
    var servers: [MemcachedProcess] = []

    override func tearDown() {
        for server in servers {
            server.resume()
            server.kill()
        }
        servers = []
        super.tearDown()
    }
}
