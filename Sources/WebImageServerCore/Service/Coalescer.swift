import WebImageSync

/// Merges identical work in flight: the first caller for a key starts `work` in its own task; callers that
/// arrive while it runs await the same result. The entry is removed when the work ends, so a later call
/// starts anew (the result cache answers it).
///
/// The work is not cancelled when a caller goes away (others may still wait; its result is cached).
///
/// - Important: Thread-safe.
final class Coalescer<Value: Sendable>: Sendable {
    private let inFlight = Mutex<[String: Task<Value, any Error>]>([:])

    /// The result of the work for `key`, started by this call (`isLeader` true) or joined.
    func value(forKey key: String, work: @escaping @Sendable () async throws -> Value) async throws -> (value: Value, isLeader: Bool) {
        let (task, isLeader) = inFlight.withLock { tasks -> (Task<Value, any Error>, Bool) in
            if let running = tasks[key] { return (running, false) }
            let task = Task { [self] in
                defer { inFlight.withLock { $0[key] = nil } }
                return try await work()
            }
            tasks[key] = task
            return (task, true)
        }
        return (try await task.value, isLeader)
    }

    /// Keys in flight now.
    var count: Int { inFlight.withLock { $0.count } }
}
