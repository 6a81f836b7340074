import Synchronization

/// The number of transfers in flight on a network thread (YYWebImage's network-activity indicator), with
/// change observers.
///
///     let token = NetworkThread.shared.activity.observe { count in indicator.isVisible = count > 0 }
///     …
///     token.cancel()
///
/// - Important: Thread-safe. Observers run on the network thread, after each change; keep them short.
public final class NetworkActivityCounter: Sendable {
    /// Stops an observation when cancelled (or released).
    public final class Observation: Sendable {
        private let cancelAction: @Sendable () -> Void
        init(_ cancel: @escaping @Sendable () -> Void) { cancelAction = cancel }
        /// Stops the observation. Idempotent.
        public func cancel() { cancelAction() }
        deinit { cancelAction() }
    }

    private struct State {
        var count = 0
        var nextID = 0
        var observers: [Int: @Sendable (Int) -> Void] = [:]
    }

    private let state = Mutex(State())

    /// Creates a counter at zero.
    public init() {}

    /// Transfers in flight now. O(1).
    public var current: Int { state.withLock { $0.count } }

    /// Calls `observer` with the new count after every change, until the returned observation is cancelled
    /// or released.
    public func observe(_ observer: @escaping @Sendable (Int) -> Void) -> Observation {
        let id = state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = observer
            return state.nextID
        }
        return Observation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// Adds `delta` and notifies observers (outside the lock).
    func change(by delta: Int) {
        let (count, observers) = state.withLock { state in
            state.count += delta
            return (state.count, Array(state.observers.values))
        }
        for observer in observers { observer(count) }
    }
}
