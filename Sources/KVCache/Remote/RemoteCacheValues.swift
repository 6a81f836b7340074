import Foundation

/// What a multi-get found: one optional value per key asked for, aligned with the request.
///
/// Keys are bytes: `"é"` (U+00E9) and `"e\u{301}"` are two keys with two values. The result is an array
/// aligned with the keys asked for (`values[i]` belongs to `requestedKeys[i]`), so two keys Swift's `String ==`
/// calls equal (canonical equivalence) can never share one entry; `subscript(_:)` compares keys by their UTF-8
/// bytes too. A key asked for twice (the same bytes) has the same value at both places.
///
/// - Important: A value type; thread-safe.
public struct RemoteCacheValues: Sendable, Sequence {
    /// The keys asked for, in the order given (duplicates kept).
    public let requestedKeys: [String]
    /// The value of each key of `requestedKeys` (same index), `nil` for a miss or a failure.
    public let values: [Data?]
    /// The found values by key bytes (for `subscript`).
    private let found: [ExactKey<String>: Data]

    /// Pairs `requestedKeys` with `values` (same count; extra entries of the longer one are dropped).
    public init(requestedKeys: [String], values: [Data?]) {
        let count = Swift.min(requestedKeys.count, values.count)
        self.requestedKeys = Array(requestedKeys.prefix(count))
        self.values = Array(values.prefix(count))
        var found: [ExactKey<String>: Data] = [:]
        for (key, value) in zip(self.requestedKeys, self.values) { if let value { found[ExactKey(key)] = value } }
        self.found = found
    }

    /// A result with nothing found for `keys` (every key a miss).
    public static func misses(_ keys: [String]) -> RemoteCacheValues {
        RemoteCacheValues(requestedKeys: keys, values: Array(repeating: nil, count: keys.count))
    }

    /// The value found for the key with exactly these UTF-8 bytes, or `nil` (a miss, a failure, or a key not
    /// asked for).
    public subscript(key: String) -> Data? { found[ExactKey(key)] }

    /// How many distinct keys (by bytes) were found.
    public var count: Int { found.count }

    /// The distinct keys found (by bytes), in request order.
    public var foundKeys: [String] { map(\.key) }

    /// Iterates the distinct keys found (by bytes) with their values, in request order.
    public func makeIterator() -> Iterator { Iterator(self) }

    /// Iterates a `RemoteCacheValues`'s found keys and values.
    ///
    /// - Important: A value type; not meant to be shared across threads while iterating.
    public struct Iterator: IteratorProtocol {
        private let result: RemoteCacheValues
        private var index = 0
        private var seen = Set<ExactKey<String>>()

        init(_ result: RemoteCacheValues) { self.result = result }

        /// The next key found and its value, or `nil` at the end.
        public mutating func next() -> (key: String, value: Data)? {
            while index < result.requestedKeys.count {
                defer { index += 1 }
                guard let value = result.values[index] else { continue }
                let key = result.requestedKeys[index]
                if seen.insert(ExactKey(key)).inserted { return (key, value) }
            }
            return nil
        }
    }
}
