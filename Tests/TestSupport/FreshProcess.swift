import Foundation
import XCTest

/// Runs a test again, alone, in a fresh process of this test binary: for measurements the tests before it in the
/// same process disturb. Resident-memory peaks are the case: XCTest's suite order changes from build to build, and
/// after the server tests (their threads still giving memory back) a decode's peak growth read 0 in one order.
///
/// Usage, first line of a test: `if try FreshProcess.runsAlone(self, module: "WebImageTests") { return }`.
public enum FreshProcess {
    /// Set in the child's environment.
    static let variable = "WEBIMAGE_FRESH_PROCESS"

    /// In the child (`WEBIMAGE_FRESH_PROCESS` set), `false`: the test's body runs there. Otherwise runs
    /// `module.Class/method` in a child (`/proc/self/exe`, the `.xctest` binary on Linux), reports its failures as
    /// this test's (with its output), forwards its `ACCOUNTING` lines, skips when it skipped, and returns `true`. A
    /// child still running after `timeout` seconds (default 600) is terminated, and the test fails.
    public static func runsAlone(_ test: XCTestCase, module: String, timeout: Double = 600,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        if ProcessInfo.processInfo.environment[variable] != nil { return false }
        // "Class.method" on Linux ("-[Class method]" elsewhere).
        let parts = test.name.trimmingCharacters(in: CharacterSet(charactersIn: "-[]"))
            .split(whereSeparator: { $0 == "." || $0 == " " }).map(String.init)
        guard parts.count == 2 else { XCTFail("unexpected test name \(test.name)", file: file, line: line); return true }
        let filter = "\(module).\(parts[0])/\(parts[1])"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [filter]
        process.environment = ProcessInfo.processInfo.environment.merging([variable: "1"]) { $1 }
        // A child that hangs is killed after `timeout`, and fails the test rather than holding the suite.
        nonisolated(unsafe) let child = process
        let killer = DispatchWorkItem { if child.isRunning { child.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        defer { killer.cancel() }
        let (status, stdout, stderr) = try ChildOutput.run(process)
        for output in stdout.split(separator: "\n") where output.hasPrefix("ACCOUNTING") { print(output) }
        if status == 0, stdout.contains("' skipped") { throw XCTSkip("\(filter) skipped in its fresh process") }
        XCTAssertEqual(status, 0, "\(filter), alone in a fresh process, failed:\n\(stdout.suffix(4_000))\n\(stderr.suffix(1_000))",
                       file: file, line: line)
        XCTAssertTrue(stdout.contains("Executed 1 test, with 0 failures"), "\(filter) did not run in its fresh process:\n\(stdout.suffix(2_000))",
                      file: file, line: line)
        return true
    }
}
