import Foundation

/// The limits an `ImageCache` applies to its memory and disk caches when it opens: bounded by default.
///
/// | limit | default | anchors |
/// |---|---|---|
/// | memory cost | 15 % of the process's memory (the cgroup limit when smaller than RAM), at most 768 MB | Nuke 13: 15 % of RAM, at most 768 MB; Kingfisher: RAM / 4 |
/// | memory entry | 10 % of the memory cost limit: a larger image is delivered but not kept | Nuke 13: 10 % |
/// | disk size | 1 GiB | Nuke: 150 MB; Kingfisher, SDWebImage: none |
/// | disk age | 7 days since last access | Kingfisher: 7 days; SDWebImage: 1 week |
/// | disk free-space floor | 1 GiB: values are trimmed while the volume has less free | none of them |
///
/// The memory cache keeps its 12 h age limit and has no count limit; the disk cache trims every 60 s.
/// A service on a 24 GB machine gets a 768 MB memory cache; in a 1 GB container, 153 MB.
///
/// ```swift
/// var limits = ImageCacheLimits.default
/// limits.diskCostLimit = 10 << 30                                   // 10 GiB on disk
/// let cache = try ImageCache(path: "/var/cache/thumbs", limits: limits)
/// ```
///
/// - Important: A value type; thread-safe. `default` reads `/proc/meminfo` and the cgroup files each time.
public struct ImageCacheLimits: Sendable, Hashable {
    /// The total cost (decoded bytes) of the images kept in memory. Default: `defaultMemoryCostLimit(forProcessMemory:)`
    /// of the process's memory.
    public var memoryCostLimit: Int
    /// The largest cost of one image kept in memory; a larger one is delivered but not cached in memory.
    /// Default: 10 % of `memoryCostLimit` (`entryCostLimit(forCostLimit:)`); left so, `ImageCache` keeps it at
    /// 10 % of the memory cache's cost limit when that changes later.
    public var memoryEntryCostLimit: Int
    /// The total size of the bytes on disk. Default 1 GiB.
    public var diskCostLimit: Int64
    /// Seconds since a disk value was last read or written before it is removed. Default 7 days.
    public var diskAgeLimit: Double
    /// The free space, in bytes, to leave on the disk cache's volume. Default 1 GiB.
    public var diskFreeSpaceLimit: Int64

    /// Share of the process's memory for the memory cache: 15 % (Nuke).
    public static let memoryShare = 0.15
    /// Cap on the memory cache: 768 MB (Nuke).
    public static let memoryCap = 768 << 20
    /// Share of `memoryCostLimit` one image may take and still be kept: 10 % (Nuke).
    public static let entryShare = 0.10

    /// The defaults, for the memory this process may use now (`SystemMemory`: RAM, or the cgroup limit when
    /// smaller).
    public static var `default`: ImageCacheLimits { ImageCacheLimits(processMemory: SystemMemory.totalBytes) }

    /// No limits at all (what `ImageCache` did before these defaults): memory and disk grow until something else
    /// trims them. Only for callers that bound their input themselves.
    public static let none = ImageCacheLimits(memoryCostLimit: .max, memoryEntryCostLimit: .max, diskCostLimit: .max,
                                              diskAgeLimit: .infinity, diskFreeSpaceLimit: 0)

    /// The default largest cost of one image for a memory cache limited to `costLimit`: `entryShare` of it
    /// (no limit for an unlimited cache). What `ImageCache.memoryEntryCostLimit` is unless set.
    public static func entryCostLimit(forCostLimit costLimit: Int) -> Int {
        costLimit == .max ? .max : Int(Double(max(costLimit, 0)) * entryShare)
    }

    /// The memory cache's default cost limit for a process that may use `bytes`: 15 %, at most 768 MB.
    public static func defaultMemoryCostLimit(forProcessMemory bytes: Int64) -> Int {
        Int(min(Double(max(bytes, 0)) * memoryShare, Double(memoryCap)))
    }

    /// The defaults for a process that may use `processMemory` bytes.
    public init(processMemory: Int64) {
        let memory = Self.defaultMemoryCostLimit(forProcessMemory: processMemory)
        self.init(memoryCostLimit: memory, memoryEntryCostLimit: Self.entryCostLimit(forCostLimit: memory),
                  diskCostLimit: 1 << 30, diskAgeLimit: 7 * 24 * 60 * 60, diskFreeSpaceLimit: 1 << 30)
    }

    /// Makes limits from explicit values.
    public init(memoryCostLimit: Int, memoryEntryCostLimit: Int, diskCostLimit: Int64, diskAgeLimit: Double,
                diskFreeSpaceLimit: Int64) {
        self.memoryCostLimit = memoryCostLimit
        self.memoryEntryCostLimit = memoryEntryCostLimit
        self.diskCostLimit = diskCostLimit
        self.diskAgeLimit = diskAgeLimit
        self.diskFreeSpaceLimit = diskFreeSpaceLimit
    }
}
