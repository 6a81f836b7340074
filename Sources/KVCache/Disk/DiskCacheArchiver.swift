import Foundation

/// How a value that is not bytes becomes bytes and back, for `DiskCache` and `Cache`.
///
/// ```swift
/// let cache = try Cache<Metadata>(path: dir, archiver: .json)
/// let custom = DiskCacheArchiver<Image>(archive: { try $0.pngData() }, unarchive: { try Image(png: $0) })
/// ```
///
/// - Important: The closures may run on any thread; they must be thread-safe.
public struct DiskCacheArchiver<Value>: Sendable {
    /// Turns a value into bytes.
    public let archive: @Sendable (Value) throws -> Data
    /// Turns bytes back into a value.
    public let unarchive: @Sendable (Data) throws -> Value

    /// An archiver from two closures.
    public init(archive: @escaping @Sendable (Value) throws -> Data, unarchive: @escaping @Sendable (Data) throws -> Value) {
        self.archive = archive
        self.unarchive = unarchive
    }

    func archived(_ value: Value) throws(KVCacheError) -> Data {
        do { return try archive(value) } catch { throw .archiving("archive: \(error)") }
    }

    func unarchived(_ data: Data) throws(KVCacheError) -> Value {
        do { return try unarchive(data) } catch { throw .archiving("unarchive: \(error)") }
    }
}

extension DiskCacheArchiver where Value == Data {
    /// Bytes as they are.
    public static var data: Self { Self(archive: { $0 }, unarchive: { $0 }) }
}

extension DiskCacheArchiver where Value: Codable & Sendable {
    /// JSON through `JSONEncoder`/`JSONDecoder`.
    public static var json: Self {
        Self(archive: { try JSONEncoder().encode($0) }, unarchive: { try JSONDecoder().decode(Value.self, from: $0) })
    }
}

extension DiskCache {
    /// Stores a value archived by `archiver`, with optional extended data.
    public func setObject<Value>(
        _ value: Value, forKey key: String, extendedData: Data? = nil, archiver: DiskCacheArchiver<Value>
    ) throws(KVCacheError) {
        try setObject(try archiver.archived(value), forKey: key, extendedData: extendedData)
    }

    /// The value for `key` unarchived by `archiver`, or `nil`. Counts as an access.
    public func object<Value>(forKey key: String, archiver: DiskCacheArchiver<Value>) throws(KVCacheError) -> Value? {
        guard let data = try object(forKey: key) else { return nil }
        return try archiver.unarchived(data)
    }
}
