import Foundation

/// How much memory this process may use, as YYAnimatedImageView sizes its frame buffer: the smaller of the
/// machine's RAM and the cgroup limit, and what is available now.
///
/// - Important: Stateless; thread-safe. Reads `/proc/meminfo` and cgroup files (small, in-memory files).
enum SystemMemory {
    /// Physical RAM, capped by the cgroup limit (v2 `memory.max`, or v1 `memory.limit_in_bytes`).
    static var totalBytes: Int64 {
        let physical = Int64(sysconf(Int32(_SC_PHYS_PAGES))) * Int64(sysconf(Int32(_SC_PAGESIZE)))
        if let limit = cgroupLimit, limit > 0, limit < physical { return limit }
        return physical
    }

    /// Memory available now: `MemAvailable`, capped by what the cgroup limit leaves.
    static var availableBytes: Int64 {
        var available = meminfo("MemAvailable") ?? meminfo("MemFree") ?? totalBytes / 2
        if let limit = cgroupLimit, let used = cgroupUsage {
            available = min(available, max(0, limit - used))
        }
        return available
    }

    private static var cgroupLimit: Int64? {
        if let v2 = readNumber("/sys/fs/cgroup/memory.max") { return v2 }
        if let v1 = readNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes"), v1 < Int64(1) << 60 { return v1 }
        return nil
    }

    private static var cgroupUsage: Int64? {
        readNumber("/sys/fs/cgroup/memory.current") ?? readNumber("/sys/fs/cgroup/memory/memory.usage_in_bytes")
    }

    /// A file holding one number; `nil` when absent or not a number (v2 writes "max" for no limit).
    private static func readNumber(_ path: String) -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A `/proc/meminfo` field in bytes (the file gives kB).
    private static func meminfo(_ field: String) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kb = Int64(parts[1]) { return kb * 1024 }
        }
        return nil
    }
}
