import Dispatch
import Synchronization
import WebImageSync

/// A fast in-memory key-value cache with LRU eviction by count, cost and age (YYMemoryCache).
///
/// ```swift
/// let cache = MemoryCache<String, Thumbnail>()
/// cache.costLimit = 64 << 20
/// cache.setObject(thumbnail, forKey: url, cost: thumbnail.byteCount)
/// let hit = cache.object(forKey: url)
/// ```
///
/// A dictionary plus a doubly linked list gives O(1) get, set and remove; a get moves the entry to the head.
/// When a set leaves the cache over `countLimit` or `costLimit`, least recently used entries are evicted at
/// once; a background sweep every `autoTrimInterval` also enforces `ageLimit` and never holds the lock for a
/// whole sweep (it tries the lock and backs off when readers hold it).
///
/// - Important: Thread-safe: every method may be called from any thread (one `Mutex`). Evicted values are
///   released after the lock is dropped, on a background queue when `releasesAsynchronously` is true, so
///   freeing a large bitmap never stalls readers.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline typealias Entry = LinkedMapEntry<Key, Value>

    /// The map and the limits that guard it. Limits live under the same lock so a set reads them for free.
    @usableFromInline
    struct State {
        @usableFromInline var map = LinkedMap<Key, Value>()
        @usableFromInline var countLimit = Int.max
        @usableFromInline var costLimit = Int.max
        var ageLimit = Double.infinity
        var autoTrimInterval = 5.0
        @usableFromInline var releasesAsynchronously = true
        var removesAllObjectsOnMemoryWarning = true
        var didReceiveMemoryWarning: (@Sendable (MemoryCache<Key, Value>) -> Void)?
        init() {}
    }

    @usableFromInline let state = WebImageSync.Mutex(State())
    @usableFromInline let graveyard = WebImageSync.Mutex(Graveyard())
    /// A test clock; `nil` reads the monotonic clock.
    @usableFromInline let testClock: (@Sendable () -> Double)?

    /// Seconds from a monotonic clock (or the test clock).
    @inlinable
    func clock() -> Double { testClock?() ?? monotonicSeconds() }

    /// A name for debugging and logs. `nil` by default.
    public let name: String?

    /// Creates an empty cache with no limits and a 5 s auto-trim.
    ///
    /// - Parameter name: A name for debugging. `nil` by default.
    public convenience init(name: String? = nil) {
        self.init(name: name, clock: nil)
    }

    /// Creates a cache reading time from `clock` (tests drive age limits with a fake clock).
    init(name: String?, clock: (@Sendable () -> Double)?) {
        self.name = name
        self.testClock = clock
        scheduleAutoTrim()
    }

    // MARK: Limits and options

    /// The maximum number of objects. No limit (`Int.max`) by default. Enforced on the next set and by the
    /// background trim.
    public var countLimit: Int {
        get { state.withLock { $0.countLimit } }
        set { state.withLock { $0.countLimit = max(0, newValue) } }
    }

    /// The maximum total cost. No limit (`Int.max`) by default. Enforced on the next set and by the
    /// background trim.
    public var costLimit: Int {
        get { state.withLock { $0.costLimit } }
        set { state.withLock { $0.costLimit = max(0, newValue) } }
    }

    /// The maximum age in seconds since an object was last set or read. No limit (`.infinity`) by default.
    /// Enforced by the background trim and `trim(toAge:)`. Access times are read from a coarse monotonic
    /// clock: precise to one kernel tick (1–4 ms).
    public var ageLimit: Double {
        get { state.withLock { $0.ageLimit } }
        set { state.withLock { $0.ageLimit = max(0, newValue) } }
    }

    /// Seconds between background trims. 5 s by default; a change takes effect after the pending sweep.
    public var autoTrimInterval: Double {
        get { state.withLock { $0.autoTrimInterval } }
        set { state.withLock { $0.autoTrimInterval = max(0.01, newValue) } }
    }

    /// Whether evicted values are released on a background queue rather than on the evicting thread.
    /// `true` by default.
    public var releasesAsynchronously: Bool {
        get { state.withLock { $0.releasesAsynchronously } }
        set { state.withLock { $0.releasesAsynchronously = newValue } }
    }

    // MARK: Queries

    /// The number of objects. O(1).
    @inlinable
    public var totalCount: Int { state.withLock { $0.map.count } }

    /// The sum of the objects' costs. O(1).
    @inlinable
    public var totalCost: Int { state.withLock { $0.map.totalCost } }

    /// Whether an object is stored for `key`. Does not count as an access (the LRU order is unchanged).
    @inlinable
    public func containsObject(forKey key: Key) -> Bool {
        state.withLock { $0.map.contains(key) }
    }

    /// The object for `key`, or `nil`. A hit becomes the most recently used object.
    @inlinable
    public func object(forKey key: Key) -> Value? {
        let now = clock()
        return state.withLock { state -> Value? in state.map.get(key, now: now) }
    }

    // MARK: Mutations

    /// Stores `value` for `key` with a cost (0 by default), making it the most recently used object; then
    /// evicts least recently used objects while over `countLimit` or `costLimit`. A `nil` value removes.
    @inlinable
    public func setObject(_ value: Value?, forKey key: Key, cost: Int = 0) {
        guard let value else {
            removeObject(forKey: key)
            return
        }
        let now = clock()
        let cost = max(0, cost)
        // `replaced` (the previous value of `key`) is released here, after the lock is dropped.
        let (evicted, replaced, async) = state.withLock { state -> ([Entry], Value?, Bool) in
            let replaced = state.map.set(key, value: value, cost: cost, now: now)
            guard state.map.count > state.countLimit || state.map.totalCost > state.costLimit else {
                return ([], replaced, false)
            }
            var evicted: [Entry] = []
            while state.map.count > state.countLimit || state.map.totalCost > state.costLimit,
                  let tail = state.map.removeTail() {
                evicted.append(tail)
            }
            return (evicted, replaced, state.releasesAsynchronously)
        }
        withExtendedLifetime(replaced) {}
        release(evicted, asynchronously: async)
    }

    /// Removes the object for `key`, if any.
    @inlinable
    public func removeObject(forKey key: Key) {
        let (removed, async) = state.withLock { state -> ([Entry], Bool) in
            guard let entry = state.map.remove(key) else { return ([], false) }
            return ([entry], state.releasesAsynchronously)
        }
        release(removed, asynchronously: async)
    }

    /// Removes every object. The objects are freed outside the lock (in the background by default).
    public func removeAllObjects() {
        let (removed, async) = state.withLock { state in (state.map.removeAll(), state.releasesAsynchronously) }
        guard removed.count > 0 else { return }
        let doomed = Doomed(removed)
        if async {
            DispatchQueue.global(qos: .utility).async { withExtendedLifetime(doomed) {} }
        }
    }

    /// Evicted entries waiting to be freed on the background queue; one drain is queued at a time, so an
    /// eviction per set costs an append, not a dispatch.
    @usableFromInline
    struct Graveyard {
        @usableFromInline var nodes: [Entry] = []
        @usableFromInline var isDrainScheduled = false
        @usableFromInline init() {}
    }

    /// Releases entries that left the map: here, outside the lock, or on a background queue.
    @usableFromInline
    func release(_ nodes: [Entry], asynchronously: Bool) {
        guard !nodes.isEmpty, asynchronously else { return }
        let arrivals = Doomed(nodes)
        let mustSchedule = graveyard.withLock { graveyard -> Bool in
            graveyard.nodes.append(contentsOf: arrivals.payload)
            if graveyard.isDrainScheduled { return false }
            graveyard.isDrainScheduled = true
            return true
        }
        guard mustSchedule else { return }
        // Holds the cache until the drain ran; the drain frees the nodes after dropping the lock.
        DispatchQueue.global(qos: .utility).async { [self] in
            let doomed = graveyard.withLock { graveyard -> Doomed<[Entry]> in
                let doomed = Doomed(graveyard.nodes)
                graveyard.nodes = []
                graveyard.isDrainScheduled = false
                return doomed
            }
            withExtendedLifetime(doomed) {}
        }
    }

    // MARK: Testing

    /// Keys from most to least recently used. O(n); for tests and debugging.
    func _keysInLRUOrder() -> [Key] { state.withLock { $0.map.keysInLRUOrder() } }

    /// Checks the map's internal consistency (list ↔ dictionary, links, totals, time order); `nil` when it
    /// holds, else a description of the first violation. O(n).
    func _checkInvariants() -> String? { state.withLock { $0.map.invariantViolation() } }
}

/// Values that left a cache and wait to be freed, carried to the release queue.
///
/// `@unchecked Sendable` is safe: the payload was removed from its map under the lock and nothing else
/// references it; the receiving queue only drops it.
@usableFromInline
struct Doomed<Payload>: @unchecked Sendable {
    let payload: Payload
    init(_ payload: Payload) { self.payload = payload }
}
