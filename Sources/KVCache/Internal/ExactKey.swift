#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A dictionary key that compares `String`s by their UTF-8 bytes; any other type by its own `==`.
///
/// Swift's `String ==` is canonical equivalence: `"é"` (U+00E9) equals `"e\u{301}"`. The manifest keeps keys
/// as bytes (SQLite's BINARY collation), and so does a file system keep paths; a dictionary keyed by `String`
/// would merge two keys the disk keeps apart (one would read the other's value). Hashing stays `String`'s
/// own (of the normalised form): equal bytes give equal hashes, and canonically equal keys merely share a
/// bucket.
///
/// - Important: A value type; thread-safe.
@usableFromInline
struct ExactKey<Base: Hashable>: Hashable {
    @usableFromInline let base: Base

    @inlinable
    init(_ base: Base) { self.base = base }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        // Folded away when specialised: a non-String key costs nothing more.
        if Base.self == String.self {
            return exactlyEqual(unsafeBitCast(lhs.base, to: String.self), unsafeBitCast(rhs.base, to: String.self))
        }
        return lhs.base == rhs.base
    }

    @inlinable
    func hash(into hasher: inout Hasher) { hasher.combine(base) }
}

/// An `ExactKey` holds only its base: it is as thread-safe as the base.
extension ExactKey: Sendable where Base: Sendable {}

/// Whether two strings have the same UTF-8 bytes (not merely canonically equivalent ones).
@inlinable
func exactlyEqual(_ lhs: String, _ rhs: String) -> Bool {
    // The same representation (one storage object, or the same small string's inline bytes and count) has
    // the same bytes: no need to reach them (a small string's `withContiguousStorageIfAvailable` copies it
    // out first, about 30 ns). Two words on 64-bit platforms; the size check folds away.
    if MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size,
       unsafeBitCast(lhs, to: (UInt64, UInt64).self) == unsafeBitCast(rhs, to: (UInt64, UInt64).self) {
        return true
    }
    let fast = lhs.utf8.withContiguousStorageIfAvailable { left in
        rhs.utf8.withContiguousStorageIfAvailable { right in
            // memcmp, not `elementsEqual`, which compares a byte at a time (a URL key is ~100 of them).
            left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
        }
    }
    if case let result?? = fast { return result }
    return lhs.utf8.elementsEqual(rhs.utf8)
}
