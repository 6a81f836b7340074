import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process and measures it the way the kernel sees it: exit status, output, wall time and its
/// own peak resident memory (`wait4`'s `ru_maxrss`). The one runner behind every peak-RSS test (decode bombs,
/// hostile sources, bounded volume), so they all measure the same way.
///
/// The child runs as a grandchild under GNU `/usr/bin/time -f %M` (Debian package `time`, in the Makefile's
/// test packages), spawned in its own process group with its output in temporary files (so nothing can block
/// it). GNU time is needed because Linux charges a process, at `exec`, the peak RSS of the memory image it
/// replaces: a child spawned straight from a test runner that has grown to 240 MB would report 240 MB.
public enum MeasuredProcess {
    /// One measured run.
    public struct Run: Sendable {
        /// The exit status, or 128 + the signal number when killed.
        public var status: Int32
        /// Everything the child printed on standard output.
        public var stdout: String
        /// Everything the child printed on standard error.
        public var stderr: String
        /// Peak resident set size in bytes (GNU time's `%M`, and at least the highest `VmHWM` seen while polling).
        public var peakRSS: Int
        /// Wall time from spawn to exit.
        public var seconds: Double
        /// Whether the run was killed for outliving its deadline or passing its memory ceiling.
        public var wasKilled: Bool
        /// Peak RSS in MB (10^6 bytes), for reports.
        public var peakMB: Double { Double(peakRSS) / 1_000_000 }
    }

    /// Thrown when the executable or GNU time is missing; tests turn it into an `XCTSkip` or a failure.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// GNU time's path.
    public static let gnuTime = "/usr/bin/time"

    /// The running test bundle's executable (to run one of its own tests again as a child).
    public static var testBinary: String { CommandLine.arguments[0] }

    /// Runs `path arguments…` with `environment` added to ours and waits for it. The process group is killed
    /// (SIGKILL) when it outlives `deadline` seconds, or when the child's resident memory passes `rssCeiling`
    /// bytes (so a runaway child cannot take the machine down; its peak is then over the ceiling) — polled
    /// every 10 ms, as it is an external process.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                           deadline: Double = 600, rssCeiling: Int = 1 << 32) throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Unavailable(description: "\(path) is not built") }
        guard FileManager.default.isExecutableFile(atPath: gnuTime) else {
            throw Unavailable(description: "\(gnuTime) missing: install the Debian package `time` (make test does)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
        let outPath = folder.appendingPathComponent("stdout").path, errPath = folder.appendingPathComponent("stderr").path
        let rssPath = folder.appendingPathComponent("maxrss").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0) // its own group: a kill reaches the child too
        let command = [gnuTime, "-f", "%M", "-o", rssPath, path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        let start = ContinuousClock.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, gnuTime, &actions, &attributes, argv, envp)
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
        // `time -o` writes "Command exited with non-zero status N" (or "Command terminated by signal N") first;
        // the number is last.
        let report = FileManager.default.fileExists(atPath: rssPath)
            ? String(decoding: try Data(contentsOf: URL(fileURLWithPath: rssPath)), as: UTF8.self) : ""
        let reportedKiB = report.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if reportedKiB == nil && !wasKilled { throw Unavailable(description: "no peak RSS from \(gnuTime): \(report)") }
        return Run(status: exit,
                   stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
                   stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self),
                   peakRSS: max((reportedKiB ?? 0) * 1_024, observedPeak), seconds: seconds, wasKilled: wasKilled)
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
