import Foundation

/// How much memory this process may use, as YYAnimatedImageView sizes its frame buffer: the smaller of the
/// machine's RAM and the cgroup limit, and what is available now. The animation buffer, the image memory
/// cache's default cost limit and the manager's default decode budget are all derived from it.
///
/// The cgroup limit is read from cgroup v2 `memory.max` and cgroup v1 `memory.limit_in_bytes`, both at the
/// mount root (what a container sees) and at the process's own cgroup from `/proc/self/cgroup` (what a systemd
/// unit or a nested group sees), walking up to the root; the smallest limit wins. v2 writes `max` and v1 a
/// number near 2^63 for "no limit": both read as none.
///
/// - Important: A value type; thread-safe. Each property reads `/proc` and cgroup files (small, in-memory files)
///   when called. `root` is `/` except in tests, which point it at a folder of fake files.
struct SystemMemory: Sendable {
    /// Where `/proc` and `/sys` are looked for.
    var root: String
    /// The machine's RAM in bytes.
    var physicalBytes: Int64

    /// The real machine.
    static var current: SystemMemory {
        SystemMemory(root: "/", physicalBytes: Int64(sysconf(Int32(_SC_PHYS_PAGES))) * Int64(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// Physical RAM, capped by the cgroup limit, of the real machine.
    static var totalBytes: Int64 { current.totalBytes }
    /// Memory available now, of the real machine.
    static var availableBytes: Int64 { current.availableBytes }

    /// Physical RAM, capped by the cgroup limit (v2 `memory.max`, or v1 `memory.limit_in_bytes`).
    var totalBytes: Int64 {
        if let limit = cgroupLimit, limit > 0, limit < physicalBytes { return limit }
        return physicalBytes
    }

    /// Memory available now: `MemAvailable`, capped by what the cgroup limit leaves.
    var availableBytes: Int64 {
        var available = meminfo("MemAvailable") ?? meminfo("MemFree") ?? totalBytes / 2
        if let limit = cgroupLimit, let used = cgroupUsage {
            available = min(available, max(0, limit - used))
        }
        return available
    }

    /// The smallest memory limit of the cgroups this process is in, or `nil` when none is set.
    var cgroupLimit: Int64? {
        var limits: [Int64] = []
        for folder in cgroupFolders(v2: true) {
            if let v2 = readNumber(folder + "/memory.max") { limits.append(v2) }
        }
        for folder in cgroupFolders(v2: false) {
            if let v1 = readNumber(folder + "/memory.limit_in_bytes"), v1 < Int64(1) << 60 { limits.append(v1) }
        }
        return limits.filter { $0 > 0 }.min()
    }

    private var cgroupUsage: Int64? {
        readNumber(path("/sys/fs/cgroup/memory.current")) ?? readNumber(path("/sys/fs/cgroup/memory/memory.usage_in_bytes"))
    }

    /// The folders whose limits apply: the mount root, then the process's group and each of its parents.
    private func cgroupFolders(v2: Bool) -> [String] {
        let mount = path(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory")
        var folders = [mount]
        guard let text = readText(path("/proc/self/cgroup")) else { return folders }
        for line in text.split(separator: "\n") {
            // "0::/a/b" (v2) or "4:memory:/a/b" (v1; the controller list may hold several names).
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let matches = v2 ? fields[0] == "0" && fields[1].isEmpty : fields[1].split(separator: ",").contains("memory")
            guard matches else { continue }
            var components = fields[2].split(separator: "/").map(String.init)
            while !components.isEmpty {
                folders.append(mount + "/" + components.joined(separator: "/"))
                components.removeLast()
            }
        }
        return folders
    }

    private func path(_ absolute: String) -> String {
        root == "/" ? absolute : root + absolute
    }

    private func readText(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }

    /// A file holding one number; `nil` when absent or not a number (v2 writes "max" for no limit).
    private func readNumber(_ path: String) -> Int64? {
        guard let text = readText(path) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A `/proc/meminfo` field in bytes (the file gives kB).
    private func meminfo(_ field: String) -> Int64? {
        guard let text = readText(path("/proc/meminfo")) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kb = Int64(parts[1]) { return kb * 1024 }
        }
        return nil
    }
}
