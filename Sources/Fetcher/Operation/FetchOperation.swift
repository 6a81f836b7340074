import Foundation
import Synchronization

/// One caller's fetch, returned by `FetchQueue.fetch(_:onResponse:onData:onProgress:completion:)`.
///
/// States: `.ready` (queued) → `.executing` (its transfer runs) → `.finished`, or `.cancelled`.
/// Callbacks run on the network thread, in order: `onResponse` once (successful responses only), `onData` and
/// `onProgress` per chunk, then `completion` exactly once — with the body, or a `FetchError`
/// (`.cancelled` after `cancel()`). Nothing is called after `completion`.
///
/// - Important: Thread-safe. `cancel()` may be called from any thread at any moment (before start, while
///   connecting, mid-body, after finishing — then it does nothing); the operation completes promptly and its
///   curl handle is freed on the network thread. Keep callbacks short: they run on the network thread.
public final class FetchOperation: Sendable, CustomStringConvertible {
    /// The life cycle of an operation.
    public enum State: Sendable, Equatable {
        /// Queued, not started.
        case ready
        /// Its transfer is running (possibly shared with identical requests).
        case executing
        /// Completed with a body or an error other than `.cancelled`.
        case finished
        /// Completed with `.cancelled`.
        case cancelled
    }

    /// The callbacks of one operation.
    struct Handlers: Sendable {
        var onResponse: (@Sendable (FetchResponse) -> Void)?
        var onData: (@Sendable (Data) -> Void)?
        var onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?
        var completion: @Sendable (Result<FetchResult, FetchError>) -> Void
    }

    private struct Status {
        var state = State.ready
        var isCancelRequested = false
        var priority: FetchPriority
    }

    /// The request this operation fetches.
    public let request: FetchRequest
    let handlers: Handlers
    private let status: Mutex<Status>
    private let cancelAction: Mutex<(@Sendable (FetchOperation) -> Void)?>
    /// Tells the queue that `priority` changed (weakly bound: does nothing once the queue's core is gone).
    private let priorityAction: (@Sendable (FetchOperation) -> Void)?

    init(request: FetchRequest, handlers: Handlers, cancelAction: @escaping @Sendable (FetchOperation) -> Void,
         priorityAction: (@Sendable (FetchOperation) -> Void)? = nil) {
        self.request = request
        self.handlers = handlers
        self.status = Mutex(Status(priority: request.priority))
        self.cancelAction = Mutex(cancelAction)
        self.priorityAction = priorityAction
    }

    /// The priority this caller asks for; `request.priority` at first. Changing it while the operation is queued
    /// moves its transfer in the queue: a transfer shared by coalesced callers runs at the highest priority of
    /// those still waiting for it (so a `.high` caller joining a `.low` prefetch raises it, and leaving lowers
    /// it again). No effect once the transfer has started or the operation has finished.
    public var priority: FetchPriority {
        get { status.withLock { $0.priority } }
        set {
            let changed = status.withLock { status -> Bool in
                guard status.priority != newValue, status.state == .ready, !status.isCancelRequested else { return false }
                status.priority = newValue
                return true
            }
            if changed { priorityAction?(self) }
        }
    }

    /// The current state.
    public var state: State { status.withLock { $0.state } }

    /// Whether `cancel()` was called before the operation finished (its completion is or will be `.cancelled`).
    public var isCancelled: Bool { status.withLock { $0.isCancelRequested } }

    /// Whether the completion has run (finished or cancelled).
    public var isFinished: Bool { status.withLock { $0.state == .finished || $0.state == .cancelled } }

    /// Cancels the operation: it completes with `FetchError.cancelled` soon, on the network thread, and a
    /// transfer it alone was using stops. Does nothing once finished. Idempotent.
    public func cancel() {
        let shouldAct = status.withLock { status -> Bool in
            guard !status.isCancelRequested, status.state == .ready || status.state == .executing else { return false }
            status.isCancelRequested = true
            return true
        }
        guard shouldAct, let action = cancelAction.withLock({ $0 }) else { return }
        action(self)
    }

    /// A readable description, for logs and test failures.
    public var description: String { "FetchOperation(\(request.url.absoluteString), \(state))" }

    // MARK: - Delivery (network thread)

    /// Marks the operation started. Returns false when it was cancelled meanwhile.
    func markExecuting() -> Bool {
        status.withLock { status in
            guard status.state == .ready, !status.isCancelRequested else { return false }
            status.state = .executing
            return true
        }
    }

    private var isLive: Bool { status.withLock { !$0.isCancelRequested && $0.state == .executing } }

    func deliver(_ response: FetchResponse) {
        if isLive { handlers.onResponse?(response) }
    }

    func deliver(chunk: Data, received: Int64, expected: Int64?) {
        guard isLive else { return }
        handlers.onData?(chunk)
        handlers.onProgress?(received, expected)
    }

    /// Whether this operation wants data chunks.
    var wantsChunks: Bool { handlers.onData != nil || handlers.onProgress != nil }

    /// Completes the operation once: a cancel request turns any result into `.cancelled`.
    func finish(_ result: Result<FetchResult, FetchError>) {
        let final: Result<FetchResult, FetchError>? = status.withLock { status in
            guard status.state == .ready || status.state == .executing else { return nil }
            let outcome: Result<FetchResult, FetchError> = status.isCancelRequested ? .failure(.cancelled) : result
            if case .failure(.cancelled) = outcome { status.state = .cancelled } else { status.state = .finished }
            return outcome
        }
        guard let final else { return }
        cancelAction.withLock { $0 = nil } // drop the reference to the queue
        handlers.completion(final)
    }
}
