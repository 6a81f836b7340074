import Foundation

/// One stored entry of a `KVStorage`: the value, where it lives, its times and its extended data.
///
/// - Important: A value type; `Sendable`.
public struct KVStorageItem: Sendable, Equatable {
    /// The key.
    public var key: String
    /// The value's bytes (empty for `itemInfo(forKey:)`, which does not read values).
    public var value: Data
    /// The value file's name in `data/`, or `nil` when the value is inline in SQLite.
    public var filename: String?
    /// The value's size in bytes.
    public var size: Int64
    /// When the value was last written.
    public var modificationTime: Date
    /// When the value was last read or written (updated lazily: reads are batched into the manifest).
    public var lastAccessTime: Date
    /// The caller's extra bytes kept beside the value (e.g. image scale, HTTP validators), or `nil`.
    public var extendedData: Data?
}

extension Date {
    /// A manifest time (microseconds since 1970).
    init(manifestTime: Int64) { self.init(timeIntervalSince1970: Double(manifestTime) / 1e6) }

    /// This date as a manifest time, clamped to the 64-bit range.
    var manifestTime: Int64 {
        let micros = (timeIntervalSince1970 * 1e6).rounded()
        if micros >= 9.2e18 { return .max }
        if micros <= -9.2e18 { return .min }
        return Int64(micros)
    }
}
