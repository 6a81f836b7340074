import Synchronization

extension ResampleWeights {
    /// The weights for one axis, shared with every resampler of the same geometry in this process.
    ///
    /// A service renders a few output sizes from sources of a few sizes over and over; building Lanczos3
    /// weights (two `sin` per tap) was about 2 % of the CPU of a 2000² → 300² thumbnail. Tables of at most
    /// `cacheableWeights` weights are kept, `cacheCapacity` of them (the whole cache is dropped when it is
    /// full: a simple bound, and a working set of sizes refills it at once); larger ones are built each time.
    /// Safe from any thread; the tables are immutable once built.
    static func cached(sourceCount: Int, destinationCount: Int, filter: ResamplingFilter,
                       blockFactor: Int = 1, sourceExtent: Double? = nil) throws -> ResampleWeights {
        let extent = extent(sourceExtent, sourceCount: sourceCount)
        let key = CacheKey(sourceCount: sourceCount, destinationCount: destinationCount, filter: filter,
                           blockFactor: blockFactor, sourceExtent: extent)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let built = try ResampleWeights(sourceCount: sourceCount, destinationCount: destinationCount, filter: filter,
                                        blockFactor: blockFactor, sourceExtent: extent)
        guard built.stride * destinationCount <= cacheableWeights else { return built }
        return cache.withLock { tables in
            if let raced = tables[key] { return raced }
            if tables.count >= cacheCapacity { tables.removeAll(keepingCapacity: true) }
            tables[key] = built
            return built
        }
    }

    /// Tables kept at most (each up to `cacheableWeights` × 4 bytes plus 16 bytes per destination sample).
    static let cacheCapacity = 64
    /// Weights in the largest table kept (64 K: a 4,096-sample axis at 16 taps; 256 KiB).
    static let cacheableWeights = 1 << 16

    private struct CacheKey: Hashable {
        var sourceCount: Int
        var destinationCount: Int
        var filter: ResamplingFilter
        var blockFactor: Int
        var sourceExtent: Double
    }

    private static let cache = Mutex<[CacheKey: ResampleWeights]>([:])

    /// Tables in the cache now (tests).
    static var cachedTableCount: Int { cache.withLock { $0.count } }
}
