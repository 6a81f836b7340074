import Dispatch

extension MemoryCache {
    /// Evicts least recently used objects until at most `count` remain. `trim(toCount: 0)` removes all.
    ///
    /// - Important: Holds the lock for batches of 64 evictions at a time, so readers interleave.
    public func trim(toCount count: Int) {
        if count <= 0 { removeAllObjects(); return }
        trim(blocking: true) { map, _ in map.count > count }
    }

    /// Evicts least recently used objects until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        if cost <= 0 { removeAllObjects(); return }
        trim(blocking: true) { map, _ in map.totalCost > cost }
    }

    /// Evicts objects not accessed for more than `age` seconds.
    public func trim(toAge age: Double) {
        if age <= 0 { removeAllObjects(); return }
        let now = clock()
        trim(blocking: true) { map, _ in map.tailTime.map { now - $0 > age } ?? false }
    }

    /// Removes tail nodes while `shouldEvict` holds, in batches of 64 per lock hold.
    ///
    /// Blocking callers wait for the lock between batches. The background sweep (`blocking: false`) only
    /// tries the lock and, when a reader holds it, backs off 10 ms and resumes later on its queue
    /// (YYMemoryCache's trylock loop, without parking a thread). Returns whether the sweep finished.
    @discardableResult
    func trim(blocking: Bool, while shouldEvict: @escaping @Sendable (LinkedMap<Key, Value>, State) -> Bool) -> Bool {
        while true {
            let batch: ([Entry], Bool, Bool)?
            if blocking {
                batch = state.withLock { Self._evictBatch(&$0, shouldEvict) }
            } else {
                batch = state.withLockIfAvailable { Self._evictBatch(&$0, shouldEvict) }
            }
            guard let (evicted, more, async) = batch else {
                // A reader holds the lock: come back in 10 ms rather than spin or block.
                DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(10)) { [weak self] in
                    self?.trim(blocking: false, while: shouldEvict)
                }
                return false
            }
            release(evicted, asynchronously: async)
            if !more { return true }
        }
    }

    /// Removes up to 64 tail nodes while `shouldEvict` holds; returns them, whether more remain, and the
    /// release mode. The lock is held.
    static func _evictBatch(
        _ state: inout State, _ shouldEvict: (LinkedMap<Key, Value>, State) -> Bool
    ) -> ([Entry], Bool, Bool) {
        var evicted: [Entry] = []
        while evicted.count < 64, shouldEvict(state.map, state), let tail = state.map.removeTail() {
            evicted.append(tail)
        }
        return (evicted, shouldEvict(state.map, state), state.releasesAsynchronously)
    }

    /// Starts the background sweep loop: every `autoTrimInterval` it enforces the cost, count and age
    /// limits. The loop holds the cache weakly and stops when the cache is freed.
    func scheduleAutoTrim() {
        let interval = state.withLock { $0.autoTrimInterval }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self else { return }
            self.autoTrim()
            self.scheduleAutoTrim()
        }
    }

    /// One background sweep: cost, then count, then age, each with trylock and back-off.
    func autoTrim() {
        let now = clock()
        trim(blocking: false) { map, state in map.totalCost > state.costLimit }
        trim(blocking: false) { map, state in map.count > state.countLimit }
        trim(blocking: false) { map, state in map.tailTime.map { now - $0 > state.ageLimit } ?? false }
    }
}
