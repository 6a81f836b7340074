import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process and reads its own peak resident set size (`ru_maxrss` from `wait4`).
///
/// The child runs under GNU `/usr/bin/time -f %M` (Debian package `time`, in the Makefile's test packages),
/// which forks it from its own small process and reports the `ru_maxrss` of its `wait4`: a process spawned
/// straight from the test runner (posix_spawn shares our memory until exec) would inherit the runner's
/// high-water mark, so every child would look as big as the runner.
public enum PeakRSS {
    /// What one run did.
    public struct Run: Sendable {
        /// Exit status (0…255), or 128 + signal.
        public var status: Int32
        /// The child's peak RSS in bytes.
        public var peakBytes: Int
        /// Wall-clock seconds.
        public var seconds: Double
        public var stdout: String
        public var stderr: String
        /// Peak RSS in MB (10^6 bytes), for reports.
        public var peakMB: Double { Double(peakBytes) / 1_000_000 }
    }

    /// A failure to run or to read the report.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `path arguments…` with `environment` added to ours and waits for it.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw Failure(description: "/usr/bin/time missing: install the Debian package `time` (make test does)")
        }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-rss-\(UUID().uuidString).txt")
        defer { do { try FileManager.default.removeItem(at: report) } catch { /* never written: time failed */ } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "%M", "-o", report.path, path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let start = Date()
        let output = try ChildOutput.run(process)
        let seconds = Date().timeIntervalSince(start)
        let text = try String(contentsOf: report, encoding: .utf8)
        // time writes "Command exited with non-zero status N" before the number when the child failed.
        guard let line = text.split(whereSeparator: \.isNewline).last, let kib = Int(line.trimmingCharacters(in: .whitespaces)) else {
            throw Failure(description: "no peak RSS from /usr/bin/time: \(text)")
        }
        return Run(status: output.status, peakBytes: kib * 1024, seconds: seconds, stdout: output.stdout, stderr: output.stderr)
    }

    /// The path of the running test bundle's executable (to run one of its tests again as a child).
    public static var testBinary: String { CommandLine.arguments[0] }
}
