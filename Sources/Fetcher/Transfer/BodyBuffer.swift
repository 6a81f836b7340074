import Foundation

/// The body of one transfer as it arrives: a `malloc` block that grows by doubling but never past the
/// request's size limit, so a hostile source can make us hold at most `limit` bytes of capacity (with `Data`'s
/// own growth, a body just over half a power of two could reserve twice its size). Handed over without a copy
/// (`Data(bytesNoCopy:…, deallocator: .free)`) when the transfer ends.
///
/// Not thread-safe; owned by one `Transfer` on the network thread. Not Sendable.
struct BodyBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Bytes held.
    private(set) var count = 0
    /// The most the buffer may grow to; nil: unbounded.
    let limit: Int?

    init(limit: Int64?) {
        self.limit = limit.map { Int(clamping: max(0, $0)) }
    }

    deinit {
        free(base)
    }

    /// Reserves room for `expected` bytes in all (a declared length or a file size), within the limit.
    /// Returns false when memory is exhausted.
    mutating func reserve(_ expected: Int) -> Bool {
        let target = min(expected, limit ?? expected)
        return target <= capacity || resize(to: target)
    }

    /// Appends `bytes`; false when they would pass the limit (nothing appended) or memory is exhausted.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (needed, overflow) = count.addingReportingOverflow(bytes.count)
        guard !overflow, needed <= limit ?? Int.max else { return false }
        if needed > capacity {
            let doubled = capacity > Int.max / 2 ? Int.max : max(capacity * 2, 64 * 1_024)
            guard resize(to: max(needed, min(doubled, limit ?? Int.max))) else { return false }
        }
        if let source = bytes.baseAddress, let base { (base + count).copyMemory(from: source, byteCount: bytes.count) }
        count = needed
        return true
    }

    /// A copy of the bytes so far (for a caller joining a transfer in flight).
    func copy() -> Data {
        guard let base else { return Data() }
        return Data(bytes: base, count: count)
    }

    /// The bytes as `Data`, without copying (the block is trimmed first when much of it is unused); the
    /// buffer is empty afterwards.
    mutating func take() -> Data {
        guard let base, count > 0 else { return Data() }
        if capacity - count > 1 << 20 { _ = resize(to: count) } // give back what a doubling over-reserved
        let data = Data(bytesNoCopy: self.base ?? base, count: count, deallocator: .free)
        self.base = nil
        capacity = 0
        count = 0
        return data
    }

    /// `realloc` to exactly `newCapacity` bytes (glibc moves large blocks with `mremap`: no copy, no peak).
    private mutating func resize(to newCapacity: Int) -> Bool {
        guard newCapacity > 0, let grown = realloc(base, newCapacity) else { return newCapacity == 0 }
        base = grown
        capacity = newCapacity
        return true
    }
}
