import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a child process and reports its exit status and peak resident memory (`wait4`'s `ru_maxrss`), for
/// the tests that show a decompression bomb is refused before anything large is allocated.
public enum ChildRSS {
    /// How a child ended and the most memory it held.
    public struct Outcome: Sendable {
        /// The exit status (128 + signal when killed by one).
        public var status: Int32
        /// Peak resident set size in kilobytes.
        public var maxRSSKilobytes: Int
        /// What it wrote to standard error.
        public var stderr: String
    }

    /// Runs `executable` with `arguments`, standard output discarded, and waits for it with `wait4`.
    public static func run(_ executable: URL, _ arguments: [String]) throws -> Outcome {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("childrss-\(UUID().uuidString).txt")
        defer {
            do { try FileManager.default.removeItem(at: errorFile) } catch { /* never created: nothing to remove */ }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let stderr = String(decoding: try Data(contentsOf: errorFile), as: UTF8.self)
        return Outcome(status: code, maxRSSKilobytes: usage.ru_maxrss, stderr: stderr)
    }
}
