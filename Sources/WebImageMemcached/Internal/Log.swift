import Logging

/// The module's logger (label `webimage.memcached`).
let memcachedLog = Logger(label: "webimage.memcached")

/// Log lines an operation makes while it holds a lane's lock, written after the lock is released: a log handler
/// is user code, never called under a lock.
///
/// - Important: A value type; one per operation.
struct LogBuffer: Sendable {
    private var lines: [Line] = []

    private struct Line: Sendable {
        var level: Logger.Level
        var message: Logger.Message
        var metadata: Logger.Metadata
    }

    /// Keeps one line for `emit`.
    mutating func add(_ level: Logger.Level, _ message: Logger.Message, metadata: Logger.Metadata = [:]) {
        lines.append(Line(level: level, message: message, metadata: metadata))
    }

    /// Writes the lines kept, in order, to the module's logger.
    func emit() {
        for line in lines { memcachedLog.log(level: line.level, line.message, metadata: line.metadata) }
    }
}
