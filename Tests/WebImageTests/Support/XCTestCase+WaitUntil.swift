import Foundation
import XCTest

extension XCTestCase {
    /// Waits (up to `timeout` seconds, 20 by default) until `condition` holds, failing the test with `what`
    /// otherwise. For state another thread reaches (a budget's waiters, a queue's counts): no fixed sleeps.
    func waitUntil(_ what: String, timeout: TimeInterval = 20, _ condition: @escaping @Sendable () -> Bool) {
        let predicate = expectation(for: NSPredicate { _, _ in condition() }, evaluatedWith: nil)
        predicate.expectationDescription = what
        wait(for: [predicate], timeout: timeout)
    }
}
