#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A few anonymous mappings of freed bitmaps, kept for the next bitmap of about the same size.
///
/// `PixelStorage` maps every bitmap of 1 MiB or more on its own, so that freeing one gives its pages back (see
/// there). A fresh mapping costs a page fault and a zeroed page per 4 KB on first write: for a 1920 × 1080
/// decode that doubled the decode's time (238 Mpx/s against libjpeg-turbo's own 451 in `make bench`). A bitmap
/// freed here is kept instead, up to `maximumMappings` of them and `maximumBytes` in all (the oldest are
/// unmapped first), and handed to the next bitmap whose page-rounded size it fits with at most a quarter to
/// spare. Kept mappings are marked `MADV_FREE`: the kernel may take their pages back under memory pressure
/// (they then read as zero again), and a write takes them back without a fault.
///
/// Safe from any thread (one `Mutex`; no system call is made while it is held).
enum PixelMappingPool {
    /// Mappings kept at most: 4.
    static let maximumMappings = 4
    /// Bytes kept at most, all mappings together: 64 MiB (a 4000 × 3000 RGBA bitmap is 48 MB).
    static let maximumBytes = 64 << 20

    private struct Mapping {
        var address: UInt
        var length: Int
    }

    private static let kept = Mutex<[Mapping]>([])

    /// `length` rounded up to whole pages (what `mmap` maps).
    static func pageRounded(_ length: Int) -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        return (length + page - 1) / page * page
    }

    /// A kept mapping of at least `length` bytes (page-rounded) and at most a quarter more, with its length;
    /// `nil` when none fits. Its bytes are whatever they were: the caller zeroes them if it must.
    static func take(length: Int) -> (pointer: UnsafeMutableRawPointer, length: Int)? {
        let wanted = pageRounded(length)
        let found = kept.withLock { mappings -> Mapping? in
            var best: Int?
            for (index, mapping) in mappings.enumerated()
            where mapping.length >= wanted && mapping.length - wanted <= wanted / 4 {
                if best.map({ mappings[$0].length > mapping.length }) ?? true { best = index }
            }
            return best.map { mappings.remove(at: $0) }
        }
        guard let found, let pointer = UnsafeMutableRawPointer(bitPattern: found.address) else { return nil }
        return (pointer, found.length)
    }

    /// Keeps a mapping for a later `take`, or unmaps it (and any kept mapping it pushes out).
    static func give(_ pointer: UnsafeMutableRawPointer, length: Int) {
        guard length <= maximumBytes else {
            munmap(pointer, length)
            return
        }
        // Marked before it is shared: the pages stay mapped, reclaimable until written again.
        madvise(pointer, length, MADV_FREE)
        let mapping = Mapping(address: UInt(bitPattern: pointer), length: length)
        let evicted = kept.withLock { mappings -> [Mapping] in
            mappings.append(mapping)
            var total = mappings.reduce(0) { $0 + $1.length }
            var out: [Mapping] = []
            while mappings.count > maximumMappings || total > maximumBytes {
                let oldest = mappings.removeFirst()
                total -= oldest.length
                out.append(oldest)
            }
            return out
        }
        for mapping in evicted {
            if let p = UnsafeMutableRawPointer(bitPattern: mapping.address) { munmap(p, mapping.length) }
        }
    }

    /// Mappings and bytes kept now (tests).
    static var keptMappings: (count: Int, bytes: Int) {
        kept.withLock { ($0.count, $0.reduce(0) { $0 + $1.length }) }
    }

    /// Unmaps every kept mapping (tests, and a caller that wants the memory back at once).
    static func drain() {
        let all = kept.withLock { mappings -> [Mapping] in
            defer { mappings.removeAll() }
            return mappings
        }
        for mapping in all {
            if let p = UnsafeMutableRawPointer(bitPattern: mapping.address) { munmap(p, mapping.length) }
        }
    }
}
