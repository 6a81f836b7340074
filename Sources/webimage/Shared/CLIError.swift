import ArgumentParser
import Synchronization

/// The CLI's shared-state lock. `Synchronization.Mutex`: the tool is not a ThreadSanitizer target, and the
/// `webimage` target does not depend on `WebImageSync`.
typealias Mutex = Synchronization.Mutex

/// Errors of the command-line tool itself (the library's own errors are reported as they are).
enum CLIError: Error, CustomStringConvertible {
    /// A bad combination of arguments.
    case usage(String)
    /// Writing an output file failed.
    case output(path: String, reason: String)
    /// A bug: an invariant of the tool did not hold.
    case internalFailure(String)

    var description: String {
        switch self {
        case .usage(let message): return message
        case .output(let path, let reason): return "cannot write \(path): \(reason)"
        case .internalFailure(let message): return "internal error: \(message)"
        }
    }
}
