import Logging
import Synchronization

/// The logger the pipeline writes to (cache misses, fetch failures, decode failures, with URL and cause).
///
/// - Important: Thread-safe.
public enum WebImageLog {
    private static let storage = Mutex(Logger(label: "webimage"))

    /// The logger used by WebImage. Default: `Logger(label: "webimage")` with swift-log's bootstrap; set your
    /// own to route WebImage's messages elsewhere or change their level.
    public static var logger: Logger {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
