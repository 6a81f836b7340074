import Dispatch
import Foundation

/// Runs a configured `Process` with its stdout and stderr captured, draining stderr on another thread so a full
/// pipe can never block the child.
enum ChildOutput {
    static func run(_ process: Process) throws -> (status: Int32, stdout: String, stderr: String) {
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
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
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self),
                String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }
}
