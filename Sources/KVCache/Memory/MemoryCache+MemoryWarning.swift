extension MemoryCache {
    /// Whether `handleMemoryWarning()` removes every object. `true` by default.
    public var removesAllObjectsOnMemoryWarning: Bool {
        get { state.withLock { $0.removesAllObjectsOnMemoryWarning } }
        set { state.withLock { $0.removesAllObjectsOnMemoryWarning = newValue } }
    }

    /// Called (on the thread that calls `handleMemoryWarning()`) after a memory warning is handled.
    /// `nil` by default.
    public var didReceiveMemoryWarning: (@Sendable (MemoryCache<Key, Value>) -> Void)? {
        get { state.withLock { $0.didReceiveMemoryWarning } }
        set { state.withLock { $0.didReceiveMemoryWarning = newValue } }
    }

    /// The memory-pressure entry point. Linux has no `UIApplication` notifications: call this when your
    /// process learns of memory pressure (a cgroup `memory.pressure` event, a PSI trigger, a signal).
    /// It removes every object if `removesAllObjectsOnMemoryWarning`, then calls `didReceiveMemoryWarning`.
    ///
    /// - Important: Thread-safe; the callback runs on the calling thread, outside the lock.
    public func handleMemoryWarning() {
        let (removeAll, callback) = state.withLock { ($0.removesAllObjectsOnMemoryWarning, $0.didReceiveMemoryWarning) }
        if removeAll { removeAllObjects() }
        callback?(self)
    }
}
