import Crypto
import Foundation
import KVCache
import WebImage

/// One encoded result: the bytes and the headers that describe them.
///
/// - Important: A value type; thread-safe.
public struct ImageResult: Sendable {
    /// The encoded image.
    public var body: Data
    /// Its MIME type (`image/webp`, …).
    public var contentType: String
    /// Its strong entity tag, quoted (`"…"`): the first 128 bits of the SHA-256 of `body`, in hex.
    public var etag: String
}

/// Where a response came from, for the metrics and the access log.
public enum ResultTier: String, Sendable, Hashable {
    /// The result cache in memory.
    case resultMemory = "result_memory"
    /// The result cache on disk.
    case resultDisk = "result_disk"
    /// Made now; the source bytes came from the originals' disk cache.
    case originalDisk = "original_disk"
    /// Made now; the source bytes came from the shared tier (memcached), not the origin.
    case originalShared = "original_shared"
    /// Made now from bytes fetched from the origin.
    case origin
    /// Joined a pipeline already making the same result.
    case coalesced
}

/// The processed-result cache: encoded bytes in memory (LRU by bytes) and on disk (`DiskCache`, the content
/// type and ETag beside each value), keyed by `key(source:processing:format:)`.
///
/// - Important: Thread-safe. `disk` reads and `store` touch the disk.
final class ResultCache: Sendable {
    let memory: MemoryCache<String, ImageResult>
    let disk: DiskCache

    /// What one memory entry holds besides its body, counted in its cost: the 64-byte key, the ETag and
    /// content-type strings, the `Data`, the LRU node and the dictionary slot (about 300 bytes), rounded up.
    /// Without it 256 MiB of 40-byte results would hold gigabytes.
    static let entryOverhead = 512

    /// The key of a result: the lowercase hex SHA-256 of source key + canonical options + output format, so
    /// every key is 64 bytes however long the source URL (the memory tier holds keys, the disk tier's manifest
    /// too), and two keys are equal only when their bytes are (Swift `String` equality is canonical Unicode
    /// equivalence: `é` and `e` + U+0301 are equal strings, yet different URLs).
    static func key(source: String, processing: String, format: String) -> String {
        SHA256.hash(data: Array("\(source)|\(processing)|format=\(format)".utf8)).map { String(format: "%02x", $0) }.joined()
    }

    init(path: String, memoryCostLimit: Int, diskCostLimit: Int64) throws(KVCacheError) {
        memory = MemoryCache()
        memory.costLimit = memoryCostLimit
        disk = try DiskCache(path: path)
        disk.costLimit = diskCostLimit
    }

    /// The result on disk for `key`, promoted to memory; `nil` when absent or unreadable (logged).
    func diskResult(forKey key: String) throws(KVCacheError) -> ImageResult? {
        guard let item = try disk.entry(forKey: key) else { return nil }
        guard let meta = item.extendedData.flatMap({ String(data: $0, encoding: .utf8) }),
              let newline = meta.firstIndex(of: "\n") else { return nil }
        let result = ImageResult(body: item.value, contentType: String(meta[..<newline]),
                                 etag: String(meta[meta.index(after: newline)...]))
        memory.setObject(result, forKey: key, cost: result.body.count + Self.entryOverhead)
        return result
    }

    /// Keeps `result` in memory and on disk.
    func store(_ result: ImageResult, forKey key: String) throws(KVCacheError) {
        memory.setObject(result, forKey: key, cost: result.body.count + Self.entryOverhead)
        try disk.setObject(result.body, forKey: key, extendedData: Data("\(result.contentType)\n\(result.etag)".utf8))
    }
}
