/// How soon a queued request starts relative to others in the same `FetchQueue`: higher first; equal priorities
/// follow the queue's order (FIFO or LIFO). `.normal` by default. A coalesced transfer runs at the highest
/// priority of its callers. A value type; Sendable.
public enum FetchPriority: Int, Sendable, Comparable, CaseIterable {
    case veryLow, low, normal, high, veryHigh

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
