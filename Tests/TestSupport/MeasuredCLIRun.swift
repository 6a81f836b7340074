import Foundation

extension WebImageCLI {
    /// One run of the binary measured by the kernel: how it ended, what it printed, its peak resident memory
    /// (`wait4`'s `ru_maxrss`) and its wall time.
    public struct MeasuredRun: Sendable {
        /// The exit status, or 128 + the signal number when killed.
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// Peak resident set size in bytes (`ru_maxrss`, which Linux reports in KiB).
        public var peakRSS: Int
        /// Wall time from spawn to exit.
        public var seconds: Double
        /// Whether the run was killed for outliving its deadline.
        public var timedOut: Bool
    }

    /// Runs `webimage arguments…` as a child process (`posix_spawn`, output into temporary files so nothing
    /// can block it) and reaps it with `wait4` to read its own `ru_maxrss`. The child is killed (SIGKILL) when
    /// it outlives `deadline` seconds, or when its resident memory passes `rssCeiling` bytes (so a runaway child
    /// cannot take the machine down; its peak is then over the ceiling) — polled every 10 ms, as it is an external
    /// process. `WEBIMAGE_CLI_BINARY` in the environment runs another build of the tool (e.g. an older commit's).
    public static func runMeasured(_ arguments: [String], deadline: Double = 60,
                                   rssCeiling: Int = 1 << 30) throws -> MeasuredRun {
        let binary = ProcessInfo.processInfo.environment["WEBIMAGE_CLI_BINARY"].map(URL.init(fileURLWithPath:)) ?? binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { throw NotBuilt(path: binary.path) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        let outPath = folder.appendingPathComponent("stdout").path, errPath = folder.appendingPathComponent("stderr").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let start = ContinuousClock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }

        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        while true {
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if !timedOut && ContinuousClock.now - start > .milliseconds(Int64(deadline * 1_000)) {
                timedOut = true
                kill(pid, SIGKILL)
            }
            if let resident = residentBytes(of: pid), resident > rssCeiling { kill(pid, SIGKILL) }
            usleep(10_000)
        }
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return MeasuredRun(status: exit,
                           stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
                           stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self),
                           peakRSS: Int(usage.ru_maxrss) * 1_024, seconds: seconds, timedOut: timedOut)
    }

    /// The current resident set of a live process (`VmRSS` in `/proc/<pid>/status`), or nil when unreadable.
    private static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil // the process has just exited: nothing to police
        }
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1_024 }
    }
}
