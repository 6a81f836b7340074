import KVCache

/// The memory keys of every variant of one cache key that `ImageCache` stored, by the key's plain form.
///
/// Bounded with the memory cache: entries the cache evicted on its own (it does not report them) are dropped
/// by a sweep once the index lists more than twice the cache's entries plus `sweepSlack`, so it never holds
/// more than about that, and the sweeps cost O(1) per store amortised.
///
/// - Important: Not thread-safe by itself; `ImageCache` keeps it in a `Mutex`.
struct VariantIndex {
    var byBase: [ImageCacheKey: Set<ImageCacheKey>] = [:]
    /// Variants listed, over every base.
    var count = 0
    /// Listed variants beyond twice the memory cache's entry count that start a sweep.
    static let sweepSlack = 64
}

extension ImageCache {
    /// Lists `key` among the variants of its base; sweeps out evicted variants when the index outgrew the cache.
    func indexVariant(_ key: ImageCacheKey) {
        let entries = memoryCache.totalCount
        variantIndex.withLock { index in
            if index.byBase[key.base, default: []].insert(key).inserted { index.count += 1 }
            guard index.count > 2 * entries + VariantIndex.sweepSlack else { return }
            // The memory cache's lock is taken per lookup, inside this one (never the other way round).
            var kept = 0
            for (base, variants) in index.byBase {
                let live = variants.filter { memoryCache.containsObject(forKey: $0) }
                index.byBase[base] = live.isEmpty ? nil : live
                kept += live.count
            }
            index.count = kept
        }
    }

    /// The memory keys of every image of `key` this cache may hold: the four full-size decode variants and
    /// every variant listed in the index (thumbnails, transforms).
    func memoryVariants(of key: String) -> [ImageCacheKey] {
        let listed = variantIndex.withLock { $0.byBase[ImageCacheKey(key)] } ?? []
        return DecodeVariant.all.map { ImageCacheKey(key, variant: $0) } + listed
    }

    /// `memoryVariants(of:)`, taking the listed ones out of the index (they are being removed).
    func takeMemoryVariants(of key: String) -> [ImageCacheKey] {
        let listed = variantIndex.withLock { index -> Set<ImageCacheKey> in
            guard let variants = index.byBase.removeValue(forKey: ImageCacheKey(key)) else { return [] }
            index.count -= variants.count
            return variants
        }
        return DecodeVariant.all.map { ImageCacheKey(key, variant: $0) } + listed
    }

    /// Variants listed in the index now (tests).
    var indexedVariantCount: Int { variantIndex.withLock { $0.count } }
}
