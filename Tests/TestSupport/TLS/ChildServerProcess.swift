import Foundation

/// A test server running as a child process, with the temporary folder that holds its certificate,
/// configuration and logs. `stop()` ends the process and deletes the folder.
///
/// - Important: Not thread-safe; one owner.
struct ChildServerProcess {
    let process: Process
    let directory: URL

    /// Terminates the process (waiting for it) and deletes the folder. Idempotent.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory) // a temporary folder: nothing to lose
    }
}
