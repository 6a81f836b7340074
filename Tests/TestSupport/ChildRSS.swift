import Foundation

/// Runs a child process and reports its exit status and peak resident memory, for the tests that show a
/// decompression bomb is refused before anything large is allocated.
///
/// The child runs under GNU `time` (`/usr/bin/time -f %M`), which forks it and reads its `ru_maxrss` from
/// `wait4`. Spawning it from the test process directly would not do: `posix_spawn` runs the child on the
/// parent's address space until `exec` (`CLONE_VM`), and Linux counts that address space's high-water mark
/// (the whole test process, 150 MB or more) as the child's peak.
public enum ChildRSS {
    /// How a child ended and the most memory it held.
    public struct Outcome: Sendable {
        /// The exit status.
        public var status: Int32
        /// Peak resident set size in kilobytes.
        public var maxRSSKilobytes: Int
        /// What it wrote to standard error.
        public var stderr: String
    }

    /// Thrown when GNU time is missing (Debian package `time`) or printed no number.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `executable` with `arguments` under `/usr/bin/time` and waits for it.
    public static func run(_ executable: URL, _ arguments: [String]) throws -> Outcome {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { throw Unavailable(description: "\(time) not installed (Debian package time)") }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("childrss-\(UUID().uuidString).txt")
        defer {
            do { try FileManager.default.removeItem(at: report) } catch { /* never written: nothing to remove */ }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: time)
        process.arguments = ["-f", "%M", "-o", report.path, executable.path] + arguments
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let errorData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: try Data(contentsOf: report), as: UTF8.self)
        // With a non-zero exit, GNU time writes "Command exited with non-zero status N" before the number.
        guard let kilobytes = text.split(whereSeparator: \.isNewline).last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw Unavailable(description: "no peak RSS from \(time): \(text)")
        }
        return Outcome(status: process.terminationStatus, maxRSSKilobytes: kilobytes,
                       stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs the built `webimage convert FILE out.png ARGUMENTS…` (a header bomb expected to be refused) and
    /// returns how it ended; throws `WebImageCLI.NotBuilt` when the binary is missing.
    public static func convert(_ file: URL, _ arguments: [String] = []) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: WebImageCLI.binary.path) else { throw WebImageCLI.NotBuilt(path: WebImageCLI.binary.path) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString).png")
        defer {
            do { try FileManager.default.removeItem(at: out) } catch { /* refused: nothing was written */ }
        }
        return try run(WebImageCLI.binary, ["convert", file.path, out.path] + arguments)
    }
}
