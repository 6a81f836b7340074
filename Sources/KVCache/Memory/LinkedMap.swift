/// One entry of `LinkedMap`: a key, its value, its cost and its last access time.
///
/// The dictionary of the map owns every node; `prev` and `next` are unowned links, so freeing a million
/// nodes is freeing a dictionary (iterative) and never a recursive chain of `deinit`s.
@usableFromInline
final class LinkedMapNode<Key: Hashable, Value> {
    @usableFromInline unowned(unsafe) var prev: LinkedMapNode?
    @usableFromInline unowned(unsafe) var next: LinkedMapNode?
    @usableFromInline let key: Key
    @usableFromInline var value: Value
    @usableFromInline var cost: Int
    @usableFromInline var time: Double

    @inlinable
    init(key: Key, value: Value, cost: Int, time: Double) {
        self.key = key
        self.value = value
        self.cost = cost
        self.time = time
    }
}

/// YYMemoryCache's `_YYLinkedMap`: a dictionary plus a doubly linked list in LRU order (head = most recent).
/// Get, insert, remove and move-to-head are O(1).
///
/// - Important: Not thread-safe: `MemoryCache` keeps it inside its `Mutex`.
@usableFromInline
struct LinkedMap<Key: Hashable, Value> {
    @usableFromInline typealias Node = LinkedMapNode<Key, Value>

    /// Owns the nodes.
    @usableFromInline var nodes: [Key: Node] = [:]
    /// Most recently used; not owning (the dictionary owns).
    @usableFromInline unowned(unsafe) var head: Node?
    /// Least recently used; not owning.
    @usableFromInline unowned(unsafe) var tail: Node?
    /// Sum of the nodes' costs (saturating: costs are caller-supplied).
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    @inlinable var count: Int { nodes.count }

    @inlinable subscript(key: Key) -> Node? { nodes[key] }

    /// Adds a new node at the head. The key must not be present.
    @inlinable
    mutating func insertAtHead(_ node: Node) {
        nodes[node.key] = node
        totalCost = totalCost.addingSaturating(node.cost)
        if let oldHead = head {
            node.next = oldHead
            oldHead.prev = node
            head = node
        } else {
            head = node
            tail = node
        }
    }

    /// Moves a node already in the map to the head.
    @inlinable
    mutating func bringToHead(_ node: Node) {
        guard head !== node else { return }
        if tail === node {
            tail = node.prev
            tail?.next = nil
        } else {
            node.next?.prev = node.prev
            node.prev?.next = node.next
        }
        node.next = head
        node.prev = nil
        head?.prev = node
        head = node
    }

    /// Changes the cost of a node in the map, keeping the total right.
    @inlinable
    mutating func updateCost(of node: Node, to cost: Int) {
        totalCost = totalCost.subtractingSaturating(node.cost).addingSaturating(cost)
        node.cost = cost
    }

    /// Unlinks and forgets a node; returns it (the caller releases it, outside the lock).
    @inlinable @discardableResult
    mutating func remove(_ node: Node) -> Node {
        let owned = nodes.removeValue(forKey: node.key) ?? node
        totalCost = totalCost.subtractingSaturating(node.cost)
        node.next?.prev = node.prev
        node.prev?.next = node.next
        if head === node { head = node.next }
        if tail === node { tail = node.prev }
        node.prev = nil
        node.next = nil
        return owned
    }

    /// Removes and returns the least recently used node.
    @inlinable
    mutating func removeTail() -> Node? {
        guard let tail else { return nil }
        return remove(tail)
    }

    /// Forgets every node and returns the dictionary that owned them, so the caller frees them outside the
    /// lock (a dictionary is freed iteratively).
    mutating func removeAll() -> [Key: Node] {
        let old = nodes
        nodes = [:]
        head = nil
        tail = nil
        totalCost = 0
        return old
    }

    /// Keys from most to least recently used (tests and debugging). O(n).
    func keysInLRUOrder() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var node = head
        while let current = node {
            keys.append(current.key)
            node = current.next
        }
        return keys
    }

    /// Checks list ↔ dictionary agreement, links, totals and time order; returns the first problem found.
    func invariantViolation() -> String? {
        var seen = 0
        var cost = 0
        var node = head
        var previous: Node?
        while let current = node {
            seen += 1
            if seen > nodes.count { return "list longer than dictionary (\(nodes.count))" }
            guard nodes[current.key] === current else { return "node for \(current.key) not in dictionary" }
            guard current.prev === previous else { return "broken prev link at \(current.key)" }
            if let previous, previous.time < current.time { return "time order broken at \(current.key)" }
            cost = cost.addingSaturating(current.cost)
            previous = current
            node = current.next
        }
        if seen != nodes.count { return "list has \(seen) nodes, dictionary \(nodes.count)" }
        if tail !== previous { return "tail is not the last node" }
        if cost != totalCost { return "total cost \(totalCost), sum of nodes \(cost)" }
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
