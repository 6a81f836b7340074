import Foundation

/// Runs a child process and reads its own peak RSS and CPU time (user + system).
///
/// The child runs under GNU `/usr/bin/time -f %M`: a process spawned straight from this one (posix_spawn
/// shares our memory until exec) inherits our high-water mark in Linux's `ru_maxrss`, so the bench process's
/// 100+ MB would be reported for every child; `time` forks the child from its own small process instead.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The `webimage` CLI built in release mode by this package or the root package, or `nil`.
    static func webimageBinary() -> String? {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let candidates = [cwd.appendingPathComponent(".build/release/webimage"),
                          cwd.deletingLastPathComponent().appendingPathComponent(".build/release/webimage")]
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The full path of `tool` on PATH, or `nil`.
    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `path arguments…` with stdout/stderr discarded; throws unless it exits 0. Returns its peak RSS.
    static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, peakRSS: Int, cpuSeconds: Double) {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-rss-\(getpid()).txt")
        let result = try spawn("/usr/bin/time", ["-f", "%M %U %S", "-o", report.path, path] + arguments)
        let text = try String(contentsOf: report, encoding: .utf8)
        try FileManager.default.removeItem(at: report)
        let fields = text.split(whereSeparator: \.isNewline).last?.split(separator: " ") ?? []
        guard fields.count == 3, let kib = Int(fields[0]), let user = Double(fields[1]), let system = Double(fields[2]) else {
            throw Failure(description: "no peak RSS / CPU time from /usr/bin/time: \(text)")
        }
        return (result, kib * 1024, user + system)
    }

    /// posix_spawn + wait4 with stdout/stderr discarded; throws unless it exits 0.
    private static func spawn(_ path: String, _ arguments: [String]) throws -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "cannot run \(path): errno \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, 0, &usage) == pid else { throw Failure(description: "wait4 failed for \(path)") }
        let exit = (status >> 8) & 0xFF
        guard status & 0x7F == 0, exit == 0 else {
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) ended with status \(status)")
        }
        return exit
    }
}
