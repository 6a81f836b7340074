import Synchronization

/// A clock the test advances by hand.
final class FakeClock: Sendable {
    private let seconds = Mutex(1_000.0)
    var now: Double { seconds.withLock { $0 } }
    func advance(by delta: Double) { seconds.withLock { $0 += delta } }
}
