import Foundation

extension WebImageCLI {
    /// One run of the binary measured by the kernel: how it ended, what it printed, its peak resident memory
    /// (`wait4`'s `ru_maxrss`) and its wall time.
    public struct MeasuredRun: Sendable {
        /// The exit status, or 128 + the signal number when killed.
        public var status: Int32
        /// Everything the tool printed on standard output.
        public var stdout: String
        /// Everything the tool printed on standard error.
        public var stderr: String
        /// Peak resident set size in bytes (GNU time's `%M`, and at least the highest `VmHWM` seen while polling).
        public var peakRSS: Int
        /// Wall time from spawn to exit.
        public var seconds: Double
        /// Whether the run was killed for outliving its deadline or passing its memory ceiling.
        public var wasKilled: Bool
    }

    /// GNU time, which forks the command from its own small process and reports the child's `ru_maxrss`
    /// from `wait4`. Needed because Linux charges a process, at `exec`, the peak RSS of the memory image it
    /// replaces: a child spawned straight from a test runner that has grown to 240 MB would report 240 MB.
    /// (Debian package `time`, in the Makefile's test packages.)
    public static let gnuTime = "/usr/bin/time"

    /// Runs `webimage arguments…` as a grandchild (`posix_spawn` of `/usr/bin/time -f %M`, output into
    /// temporary files so nothing can block it) and returns its peak RSS as `wait4` reports it. The process
    /// group is killed (SIGKILL) when it outlives `deadline` seconds, or when the tool's resident memory
    /// passes `rssCeiling` bytes (so a runaway child cannot take the machine down; its peak is then over
    /// the ceiling) — polled every 10 ms, as it is an external process. `WEBIMAGE_CLI_BINARY` in the
    /// environment runs another build of the tool (e.g. an older commit's).
    public static func runMeasured(_ arguments: [String], deadline: Double = 60,
                                   rssCeiling: Int = 1 << 30) throws -> MeasuredRun {
        let binary = ProcessInfo.processInfo.environment["WEBIMAGE_CLI_BINARY"].map(URL.init(fileURLWithPath:)) ?? binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { throw NotBuilt(path: binary.path) }
        guard FileManager.default.isExecutableFile(atPath: gnuTime) else { throw NotBuilt(path: gnuTime) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        let outPath = folder.appendingPathComponent("stdout").path, errPath = folder.appendingPathComponent("stderr").path
        let rssPath = folder.appendingPathComponent("maxrss").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0) // its own group: a kill reaches the tool too
        let command = [gnuTime, "-f", "%M", "-o", rssPath, binary.path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let start = ContinuousClock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, gnuTime, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }

        var status: Int32 = 0
        var wasKilled = false
        var observedPeak = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            for child in children(of: pid) {
                guard let (resident, peak) = memory(of: child) else { continue }
                observedPeak = max(observedPeak, peak)
                if resident > rssCeiling && !wasKilled {
                    wasKilled = true
                    kill(-pid, SIGKILL)
                }
            }
            if !wasKilled && ContinuousClock.now - start > .milliseconds(Int64(deadline * 1_000)) {
                wasKilled = true
                kill(-pid, SIGKILL)
            }
            usleep(10_000)
        }
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        // `time -o` writes "Command exited with non-zero status N" first when N ≠ 0; the number is last.
        let report = FileManager.default.fileExists(atPath: rssPath)
            ? String(decoding: try Data(contentsOf: URL(fileURLWithPath: rssPath)), as: UTF8.self) : ""
        let reportedKiB = report.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return MeasuredRun(status: exit,
                           stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
                           stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self),
                           peakRSS: max((reportedKiB ?? 0) * 1_024, observedPeak), seconds: seconds,
                           wasKilled: wasKilled)
    }

    /// The children of `pid` (`/proc/<pid>/task/<pid>/children`); empty when unreadable.
    private static func children(of pid: pid_t) -> [pid_t] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else {
            return [] // the process has just exited: nothing to police
        }
        return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `VmRSS` and `VmHWM` (its own peak) of a live process, in bytes; nil when unreadable.
    private static func memory(of pid: pid_t) -> (resident: Int, peak: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return nil // the process has just exited
        }
        func value(_ key: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(key) }
                .flatMap { $0.split(separator: " ").compactMap { Int($0) }.first }.map { $0 * 1_024 }
        }
        guard let resident = value("VmRSS:"), let peak = value("VmHWM:") else { return nil }
        return (resident, peak)
    }
}
