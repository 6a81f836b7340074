@testable import Fetcher
import XCTest

/// A network thread and a queue on it, for tests with an origin of their own; `tearDown(_:)` checks that no
/// transfer is left in flight and no easy handle leaked, then stops the thread.
final class NetworkFixture {
    let thread = NetworkThread()
    private(set) var queue: FetchQueue!

    init() { queue = FetchQueue(thread: thread) }

    func tearDown(_ test: XCTestCase, file: StaticString = #filePath, line: UInt = #line) {
        test.flush(thread)
        XCTAssertEqual(thread.activity.current, 0, "no transfer left in flight", file: file, line: line)
        XCTAssertEqual(CurlEasyHandle.liveCount.load(ordering: .relaxed), 0, "every easy handle was freed", file: file, line: line)
        queue = nil
        thread.stop()
        thread.join()
    }
}
