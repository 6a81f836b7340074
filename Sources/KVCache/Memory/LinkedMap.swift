/// One slot of `LinkedMap`: a key, its value, its cost and its last access time. A free slot has no key
/// and no value.
@usableFromInline
struct LinkedMapSlot<Key: Hashable, Value> {
    @usableFromInline var key: Key?
    @usableFromInline var value: Value?
    @usableFromInline var cost: Int
    @usableFromInline var time: Double

    @inlinable
    init(key: Key?, value: Value?, cost: Int, time: Double) {
        self.key = key
        self.value = value
        self.cost = cost
        self.time = time
    }
}

/// The list links of one `LinkedMap` slot (slot indices, `-1` for none). Kept in their own dense array
/// (8 bytes a slot): a move to the head touches the neighbours' links only, which then stay in cache.
/// A free slot is chained to the next free one through `next`.
@usableFromInline
struct LinkedMapLink {
    @usableFromInline var prev: Int32
    @usableFromInline var next: Int32

    @inlinable
    init(prev: Int32, next: Int32) {
        self.prev = prev
        self.next = next
    }
}

/// An entry that left a `LinkedMap`, handed to the caller so it is released outside the lock.
@usableFromInline
struct LinkedMapEntry<Key, Value> {
    @usableFromInline let key: Key
    @usableFromInline let value: Value

    @inlinable
    init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }
}

/// YYMemoryCache's `_YYLinkedMap`: a dictionary plus a doubly linked list in LRU order (head = most recent).
/// Get, insert, remove and move-to-head are O(1).
///
/// The nodes are slots of one contiguous array linked by `Int32` indices, with a free list of removed
/// slots; the dictionary maps a key to its slot. No allocation or reference counting per node, and
/// freeing a million entries is freeing two collections (iterative, never a chain of `deinit`s). Holds at
/// most `Int32.max` entries.
///
/// - Important: Not thread-safe: `MemoryCache` keeps it inside its `Mutex`.
@usableFromInline
struct LinkedMap<Key: Hashable, Value> {
    @usableFromInline typealias Slot = LinkedMapSlot<Key, Value>
    @usableFromInline typealias Entry = LinkedMapEntry<Key, Value>
    @usableFromInline typealias Link = LinkedMapLink

    /// Key → slot index. String keys compare by their bytes (`ExactKey`), as the disk cache stores them.
    @usableFromInline var index: [ExactKey<Key>: Int32] = [:]
    /// Live and free slots.
    @usableFromInline var slots: ContiguousArray<Slot> = []
    /// `links[i]` links `slots[i]`.
    @usableFromInline var links: ContiguousArray<Link> = []
    /// Most recently used slot, `-1` when empty.
    @usableFromInline var head: Int32 = -1
    /// Least recently used slot, `-1` when empty.
    @usableFromInline var tail: Int32 = -1
    /// First free slot (chained through `next`), `-1` for none.
    @usableFromInline var freeHead: Int32 = -1
    /// Sum of the entries' costs (saturating: costs are caller-supplied).
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    @inlinable var count: Int { index.count }

    @inlinable func contains(_ key: Key) -> Bool { index[ExactKey(key)] != nil }

    /// The last access time of the least recently used entry, or `nil` when empty.
    @inlinable var tailTime: Double? { tail < 0 ? nil : slots[Int(tail)].time }

    /// The value for `key`, made the most recently used with access time `now`; `nil` when absent.
    @inlinable
    mutating func get(_ key: Key, now: Double) -> Value? {
        guard let i = index[ExactKey(key)] else { return nil }
        slots[Int(i)].time = now
        bringToHead(i)
        return slots[Int(i)].value
    }

    /// Sets `value` for `key` (one hash lookup whether the key is new or not) and makes it the most recently
    /// used; returns the value it replaced, for the caller to release outside the lock.
    @inlinable
    mutating func set(_ key: Key, value: Value, cost: Int, now: Double) -> Value? {
        let candidate = freeHead >= 0 ? freeHead : Int32(slots.count)
        var found: Int32 = -1
        Self.claim(&index[ExactKey(key), default: candidate], candidate: candidate, found: &found)
        if found >= 0 {
            let i = Int(found)
            totalCost = totalCost.subtractingSaturating(slots[i].cost).addingSaturating(cost)
            let old = slots[i].value
            slots[i].value = value
            slots[i].cost = cost
            slots[i].time = now
            bringToHead(found)
            return old
        }
        let slot = Slot(key: key, value: value, cost: cost, time: now)
        let link = Link(prev: -1, next: head)
        if freeHead >= 0 {
            freeHead = links[Int(candidate)].next
            slots[Int(candidate)] = slot
            links[Int(candidate)] = link
        } else {
            slots.append(slot)
            links.append(link)
        }
        if head >= 0 { links[Int(head)].prev = candidate } else { tail = candidate }
        head = candidate
        totalCost = totalCost.addingSaturating(cost)
        return nil
    }

    /// Reports through `found` the slot already stored in `stored`, unless it is the `candidate` just
    /// inserted as the default.
    @inlinable
    static func claim(_ stored: inout Int32, candidate: Int32, found: inout Int32) {
        if stored != candidate { found = stored }
    }

    /// Moves a live slot to the head.
    @inlinable
    mutating func bringToHead(_ i: Int32) {
        guard head != i else { return }
        let prev = links[Int(i)].prev, next = links[Int(i)].next
        // `i` is not the head, so it has a previous slot.
        links[Int(prev)].next = next
        if next >= 0 { links[Int(next)].prev = prev } else { tail = prev }
        links[Int(i)] = Link(prev: -1, next: head)
        links[Int(head)].prev = i
        head = i
    }

    /// Unlinks and frees the slot of `key`; returns its entry (the caller releases it, outside the lock).
    @inlinable
    mutating func remove(_ key: Key) -> Entry? {
        guard let i = index.removeValue(forKey: ExactKey(key)) else { return nil }
        return unlink(i)
    }

    /// Removes and returns the least recently used entry.
    @inlinable
    mutating func removeTail() -> Entry? {
        guard tail >= 0, let key = slots[Int(tail)].key else { return nil }
        index.removeValue(forKey: ExactKey(key))
        return unlink(tail)
    }

    /// Unlinks slot `i` (already gone from `index`), puts it on the free list and returns its entry.
    @inlinable
    mutating func unlink(_ i: Int32) -> Entry? {
        let prev = links[Int(i)].prev, next = links[Int(i)].next
        if prev >= 0 { links[Int(prev)].next = next } else { head = next }
        if next >= 0 { links[Int(next)].prev = prev } else { tail = prev }
        totalCost = totalCost.subtractingSaturating(slots[Int(i)].cost)
        let key = slots[Int(i)].key, value = slots[Int(i)].value
        slots[Int(i)] = Slot(key: nil, value: nil, cost: 0, time: 0)
        links[Int(i)] = Link(prev: -1, next: freeHead)
        freeHead = i
        guard let key, let value else { return nil }
        return Entry(key: key, value: value)
    }

    /// Forgets every entry and returns the old map, so the caller frees it outside the lock (arrays and
    /// dictionaries are freed iteratively).
    mutating func removeAll() -> LinkedMap {
        let old = self
        self = LinkedMap()
        return old
    }

    /// Keys from most to least recently used (tests and debugging). O(n).
    func keysInLRUOrder() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var i = head
        while i >= 0, keys.count <= slots.count {
            if let key = slots[Int(i)].key { keys.append(key) }
            i = links[Int(i)].next
        }
        return keys
    }

    /// Checks list ↔ dictionary agreement, links, totals, time order and the free list; returns the first
    /// problem found.
    func invariantViolation() -> String? {
        if links.count != slots.count { return "\(slots.count) slots, \(links.count) links" }
        var seen = 0
        var cost = 0
        var i = head
        var previous: Int32 = -1
        while i >= 0 {
            seen += 1
            if seen > index.count { return "list longer than dictionary (\(index.count))" }
            guard Int(i) < slots.count else { return "link \(i) out of range" }
            let slot = slots[Int(i)]
            guard let key = slot.key, slot.value != nil else { return "free slot \(i) in the list" }
            guard index[ExactKey(key)] == i else { return "slot for \(key) not in dictionary" }
            guard links[Int(i)].prev == previous else { return "broken prev link at \(key)" }
            if previous >= 0, slots[Int(previous)].time < slot.time { return "time order broken at \(key)" }
            cost = cost.addingSaturating(slot.cost)
            previous = i
            i = links[Int(i)].next
        }
        if seen != index.count { return "list has \(seen) nodes, dictionary \(index.count)" }
        if tail != previous { return "tail is not the last node" }
        if cost != totalCost { return "total cost \(totalCost), sum of nodes \(cost)" }
        var free = 0
        var f = freeHead
        while f >= 0 {
            free += 1
            guard Int(f) < slots.count, free <= slots.count else { return "free list broken at \(f)" }
            guard slots[Int(f)].key == nil, slots[Int(f)].value == nil else { return "live slot \(f) on the free list" }
            f = links[Int(f)].next
        }
        if free + seen != slots.count { return "\(slots.count) slots, \(seen) live and \(free) free" }
        return nil
    }
}

extension Int {
    /// `self + other`, clamped to `Int.max`/`Int.min` instead of trapping.
    @inlinable
    func addingSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, clamped instead of trapping.
    @inlinable
    func subtractingSaturating(_ other: Int) -> Int {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}
