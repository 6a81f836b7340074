import Dispatch
import Foundation

/// Runs the built `webimage` binary (`.build/debug/webimage`, which `swift build` and `swift test` build) as a
/// child process, for the CLI tests of every test target.
///
/// Tests turn `NotBuilt` into an `XCTSkip` with its message.
public enum WebImageCLI {
    /// What one run printed and how it ended.
    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Thrown when the binary has not been built.
    public struct NotBuilt: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "\(path) not built; run `swift build` first" }
    }

    /// The binary's location.
    public static var binary: URL { Corpus.packageRoot.appendingPathComponent(".build/debug/webimage") }

    /// Runs `webimage arguments…` and waits for it; `environment` replaces the child's whole environment when
    /// given (this process's environment by default).
    public static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { throw NotBuilt(path: binary.path) }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = try ChildOutput.run(process)
        return Run(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }
}
