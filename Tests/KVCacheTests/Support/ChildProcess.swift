import Foundation
import Synchronization

/// Runs one test method of this very test binary in a child process (the binary `swift test` launched,
/// re-executed with the test's name), with extra environment variables, and collects its standard output.
final class ChildProcess: @unchecked Sendable { // the Process is only touched from the test's thread
    let process = Process()
    private let output = Mutex(Data())
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let readyMarker: Data
    private let input = Pipe()

    /// The test binary: `/proc/self/exe` is the `.xctest` executable `swift test` runs on Linux.
    static var testBinary: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    init(test: String, environment: [String: String], readyMarker: String = "READY\n") throws {
        self.readyMarker = Data(readyMarker.utf8)
        process.executableURL = Self.testBinary
        process.arguments = [test]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = pipe.fileHandleForReading
        let thread = Thread { [self] in
            var signalled = false
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                let hasMarker = output.withLock { buffer -> Bool in
                    buffer.append(chunk)
                    return buffer.range(of: self.readyMarker) != nil
                }
                if hasMarker && !signalled {
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
            finished.signal()
        }
        thread.start()
    }

    /// Waits until the child printed its ready marker (or exited). Returns false on timeout.
    func waitUntilReady(timeout: Double) -> Bool { ready.wait(timeout: .now() + timeout) == .success }

    /// What the child printed so far.
    var outputSoFar: String { output.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Sends a line to the child's standard input (e.g. a start signal).
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Kills the child with SIGKILL.
    func kill() { _ = Glibc.kill(process.processIdentifier, SIGKILL) }

    /// Waits for the child to exit and its output to be drained; returns its output lines.
    func finish() -> [Substring] {
        process.waitUntilExit()
        finished.wait()
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
        return text.split(separator: "\n", omittingEmptySubsequences: true)
    }

    /// Whether the child died of SIGKILL.
    var wasKilled: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL }
}

/// Blocks until the parent sends a line on standard input (a start signal for child processes).
func awaitStartSignal() {
    _ = FileHandle.standardInput.availableData
}

/// Writes a line to standard output at once (unbuffered `write(2)`), so a parent sees it even if this
/// process is killed right after.
func emitLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
        if written <= 0 { if errno == EINTR { continue }; return }
        offset += written
    }
}
