import Foundation
import TestSupport
import XCTest

/// Runs the built `webimage` binary (`.build/debug/webimage`, built by `swift build` / `swift test`) as a
/// child process, the way `ImageCodecTests/CLITests.swift` does; skips when it is not built.
struct CLIProcess {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String]) throws -> Run {
        let binary = Corpus.packageRoot.appendingPathComponent(".build/debug/webimage")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) not built; run `swift build` first")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Drain stderr on another thread so a full pipe can never block the child.
        let errorData = Mutex<Data>(Data())
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            drained.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }

    /// A new empty folder under the temporary directory; removed by the caller.
    static func temporaryFolder(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
