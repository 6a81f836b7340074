import Foundation

/// The transforms made so far, keyed by the source profile's bytes, the target's and the pixel layout, so a
/// thousand photos from the same camera build one transform. Also remembers profiles found unusable or
/// equivalent to sRGB (so a bad or an sRGB profile is parsed once, not per image).
///
/// Bounded: at most `countLimit` entries (32) and `byteLimit` (16 MiB) of remembered profile bytes, least
/// recently used evicted first. A key holds the profile bytes themselves (compared in full on a hit), so two
/// different profiles can never share an entry, however their hashes collide. The transform made for a key
/// may be built twice when two threads miss at once; both results are correct and the last one stays.
///
/// - Important: Thread-safe (a `Mutex`); transforms are built and evicted entries released outside the lock.
final class ColorTransformCache: Sendable {
    /// What is known about one (source, target, layout).
    enum Entry: Sendable {
        /// Nothing to do: the source is sRGB or equal to the target.
        case identity
        /// The source profile cannot be used for this layout (refused, wrong colour space…).
        case unusable
        /// Convert with this transform.
        case transform(ColorTransform)
    }

    /// A cache key: the source's bytes (ICC, or a synthetic description), the target's (empty for sRGB), layout.
    struct Key: Hashable, Sendable {
        // Arrays, not `Data`: `Data` keeps its storage reference in a multi-payload enum (spare bits set), which
        // LeakSanitizer cannot follow, so the fuzz targets reported every cached profile as leaked.
        let source: [UInt8]
        let target: [UInt8]
        let layout: ColorLayout
        private let digest: UInt64

        init(source: Data, target: Data, layout: ColorLayout) {
            self.source = [UInt8](source)
            self.target = [UInt8](target)
            self.layout = layout
            self.digest = Self.fnv1a(self.source, Self.fnv1a(self.target, 0xcbf2_9ce4_8422_2325 ^ UInt64(layout.rawValue)))
        }

        /// Bytes this key holds.
        var byteCount: Int { source.count + target.count }

        func hash(into hasher: inout Hasher) { hasher.combine(digest) }

        static func == (a: Key, b: Key) -> Bool {
            a.digest == b.digest && a.layout == b.layout && a.source == b.source && a.target == b.target
        }

        private static func fnv1a(_ data: some Collection<UInt8>, _ seed: UInt64) -> UInt64 {
            var h = seed ^ UInt64(data.count)
            for byte in data { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return h
        }
    }

    private struct State {
        var entries: [Key: (entry: Entry, tick: UInt64)] = [:]
        var bytes = 0
        var tick: UInt64 = 0
    }

    /// Most entries kept: 32.
    let countLimit: Int
    /// Most profile bytes kept in keys: 16 MiB.
    let byteLimit: Int
    private let state = Mutex(State())

    /// The process-wide cache the decoders use.
    static let shared = ColorTransformCache()

    /// Makes a cache with the given limits (defaults 32 entries, 16 MiB).
    init(countLimit: Int = 32, byteLimit: Int = 16 << 20) {
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    /// The entry for `key`, building it with `make` (outside the lock) on a miss.
    func entry(for key: Key, make: () -> Entry) -> Entry {
        let hit: Entry? = state.withLock { s in
            guard let found = s.entries[key] else { return nil }
            s.tick += 1
            s.entries[key]?.tick = s.tick
            return found.entry
        }
        if let hit { return hit }
        let made = make()
        var evicted: [Entry] = []
        state.withLock { s in
            s.tick += 1
            if s.entries.updateValue((made, s.tick), forKey: key) == nil { s.bytes += key.byteCount }
            while s.entries.count > countLimit || (s.bytes > byteLimit && s.entries.count > 1) {
                guard let oldest = s.entries.min(by: { $0.value.tick < $1.value.tick }) else { break }
                s.entries[oldest.key] = nil
                s.bytes -= oldest.key.byteCount
                evicted.append(oldest.value.entry)
            }
        }
        _ = evicted  // released here, after the lock
        return made
    }

    /// Entries held now.
    var count: Int { state.withLock { $0.entries.count } }

    /// Profile bytes held now by the keys.
    var byteCount: Int { state.withLock { $0.bytes } }
}
