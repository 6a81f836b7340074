/// A reference usable only on one network thread, carried through Sendable closures to get there (the idea of
/// swift-nio's `NIOLoopBound`).
///
/// `@unchecked Sendable`: the wrapper may cross threads, but `value` is only read on `thread` (asserted in
/// debug builds), so the non-Sendable object is never touched concurrently.
struct ThreadBound<Value: AnyObject>: @unchecked Sendable {
    let thread: NetworkThread
    private let unsafeValue: Value

    init(_ value: Value, on thread: NetworkThread) {
        self.unsafeValue = value
        self.thread = thread
    }

    /// The object; only on `thread`.
    var value: Value {
        thread.assertOnThread()
        return unsafeValue
    }
}
