import Foundation
import Synchronization

/// Runs fetches on a network thread: at most `maxConcurrentTransfers` at once, by priority then FIFO or LIFO,
/// with suspend/resume, cancel-all, coalescing of identical requests and an opt-in failed-URL list.
///
///     let operation = FetchQueue.shared.fetch(FetchRequest(url: url), onProgress: { received, expected in
///         …
///     }) { result in
///         switch result {
///         case .success(let fetched): use(fetched.body)
///         case .failure(.notModified): useCachedCopy()
///         case .failure(let error): report(error)
///         }
///     }
///     operation.cancel() // at any moment
///
///     let fetched = try await FetchQueue.shared.fetch(FetchRequest(url: url)) // task cancellation cancels
///
/// Coalescing: while a request is queued or running, an identical one (same `CoalescingKey`: URL, headers,
/// credentials, cookie/TLS policy, limits) joins it instead of starting another transfer; each caller has its
/// own callbacks and may cancel alone; the transfer stops when its last caller cancels.
///
/// - Important: Thread-safe: every method and property may be used from any thread. Scheduling happens on
///   the network thread; callbacks run there (keep them short).
public final class FetchQueue: Sendable {
    /// The order of queued requests of equal priority.
    public enum Order: Sendable, Equatable {
        /// Oldest first (the default).
        case fifo
        /// Newest first (e.g. the rows a user just scrolled to).
        case lifo
    }

    private struct Settings {
        var maxConcurrentTransfers: Int
        var order: Order
        var isSuspended = false
        /// Bumped by every write; the core applies a snapshot only if it is newer than the last it applied.
        var version = 0
    }

    /// A queue on `NetworkThread.shared` with the defaults.
    public static let shared = FetchQueue()

    /// The network thread this queue runs on.
    public let thread: NetworkThread
    /// The failed-URL list consulted by requests with `usesFailedURLList`. Its own, empty list by default.
    public let failedURLs: FailedURLList
    /// Whether identical in-flight requests share one transfer. True by default.
    public let coalescesRequests: Bool
    private let core: ThreadBound<FetchQueueCore>
    private let settings: Mutex<Settings>

    /// A queue on `thread` (the shared one by default) running at most `maxConcurrentTransfers` transfers
    /// (6 by default, at least 1) in `order` (FIFO by default).
    public init(thread: NetworkThread = .shared, maxConcurrentTransfers: Int = 6, order: Order = .fifo,
                coalescesRequests: Bool = true, failedURLs: FailedURLList = FailedURLList()) {
        let limit = max(1, maxConcurrentTransfers)
        self.thread = thread
        self.failedURLs = failedURLs
        self.coalescesRequests = coalescesRequests
        self.settings = Mutex(Settings(maxConcurrentTransfers: limit, order: order))
        let core = FetchQueueCore(thread: thread, failedURLs: failedURLs, coalesces: coalescesRequests,
                                  maxConcurrent: limit, isLIFO: order == .lifo)
        let bound = ThreadBound(core, on: thread)
        self.core = bound
        // Weakly: operations in flight keep the core alive (not the queue), so a queue released while it still
        // holds operations finishes them, and ends them with `.networkThreadStopped` if the thread stops first.
        thread.submit { loop in
            let core = bound.value
            loop.onStop(ObjectIdentifier(core)) { [weak core] in core?.stop(loop: loop) }
        }
    }

    /// Starts fetching `request` and returns its operation at once (state `.ready` until its transfer starts).
    ///
    /// - Parameters:
    ///   - onResponse: the response head of a successful response, once, before any data.
    ///   - onData: each piece of the body as it arrives (for progressive decoding).
    ///   - onProgress: bytes received so far and the expected total (nil when unknown), after each piece.
    ///   - completion: the whole body or a `FetchError`, exactly once.
    /// All run on the network thread. A `data:` URL is decoded at once (within `maximumResponseSize`), without
    /// entering the queue; a URL whose scheme is not http, https, file or data fails at once with
    /// `.invalidURL`, without entering the queue.
    @discardableResult
    public func fetch(_ request: FetchRequest,
                      onResponse: (@Sendable (FetchResponse) -> Void)? = nil,
                      onData: (@Sendable (Data) -> Void)? = nil,
                      onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)? = nil,
                      completion: @escaping @Sendable (Result<FetchResult, FetchError>) -> Void) -> FetchOperation {
        let bound = core
        let handlers = FetchOperation.Handlers(onResponse: onResponse, onData: onData, onProgress: onProgress,
                                               completion: completion)
        let operation = FetchOperation(request: request, handlers: handlers, cancelAction: { operation in
            let submitted = bound.thread.submit { loop in bound.value.cancel(operation, loop: loop) }
            if !submitted { operation.finish(.failure(.cancelled)) }
        }, priorityAction: { operation in
            bound.thread.submit { loop in bound.value.reprioritize(operation, loop: loop) }
        })
        // A scheme no transfer can serve fails at once, without entering the queue (`data:` URIs scraped from
        // HTML, `ftp:`): thousands of them used to wait for slots only to fail one by one. The completion still
        // runs on the network thread, as every callback does.
        // A `data:` URL is decoded by the fetcher on the network thread, at once: it holds no transfer slot.
        if request.url.scheme?.lowercased() == "data" {
            let deliver: @Sendable (NetworkLoop?) -> Void = { _ in Self.finishDataURL(operation) }
            if !thread.submit({ loop in deliver(loop) }) { operation.finish(.failure(.networkThreadStopped)) }
            return operation
        }
        guard Self.supportsScheme(of: request.url) else {
            let error = FetchError.invalidURL(request.url.absoluteString)
            if !thread.submit({ _ in operation.finish(.failure(error)) }) { operation.finish(.failure(error)) }
            return operation
        }
        let submitted = thread.submit { loop in bound.value.add(operation, loop: loop) }
        if !submitted { operation.finish(.failure(.networkThreadStopped)) }
        return operation
    }

    /// Fetches `request`; cancelling the calling task cancels the fetch (it then throws `.cancelled`).
    ///
    /// - Throws: `FetchError`.
    public func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchResult {
        let slot = Mutex<FetchOperation?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<FetchResult, FetchError>, Never>) in
                let operation = fetch(request) { continuation.resume(returning: $0) }
                slot.withLock { $0 = operation }
                if Task.isCancelled { operation.cancel() }
            }
        } onCancel: {
            slot.withLock { $0 }?.cancel()
        }
        return try result.get()
    }

    /// At most this many transfers run at once (coalesced callers count once). 6 by default; at least 1.
    /// Raising it starts queued requests at once.
    public var maxConcurrentTransfers: Int {
        get { settings.withLock { $0.maxConcurrentTransfers } }
        set {
            let limit = max(1, newValue)
            applySettings(settings.withLock { $0.maxConcurrentTransfers = limit; $0.version += 1; return $0 })
        }
    }

    /// The order of queued requests of equal priority. `.fifo` by default.
    public var order: Order {
        get { settings.withLock { $0.order } }
        set {
            applySettings(settings.withLock { $0.order = newValue; $0.version += 1; return $0 })
        }
    }

    /// Whether queued requests wait (running ones continue).
    public var isSuspended: Bool { settings.withLock { $0.isSuspended } }

    /// Stops starting queued requests; running transfers continue.
    public func suspend() {
        applySettings(settings.withLock { $0.isSuspended = true; $0.version += 1; return $0 })
    }

    /// Starts queued requests again.
    public func resume() {
        applySettings(settings.withLock { $0.isSuspended = false; $0.version += 1; return $0 })
    }

    /// Applies `snapshot` (the settings right after one write, taken under the same lock) to the core, in
    /// submission order with the queue's other work — unless the core already applied a newer one: when racing
    /// threads submit their snapshots in the opposite order of their writes, the older one is skipped, so the
    /// core always ends with the last write (a `suspend()` racing a `resume()` used to leave the core
    /// suspended while `isSuspended` said false).
    private func applySettings(_ snapshot: Settings) {
        let bound = core
        thread.submit { loop in
            let core = bound.value
            guard snapshot.version > core.settingsVersion else { return }
            core.settingsVersion = snapshot.version
            core.maxConcurrent = snapshot.maxConcurrentTransfers
            core.isLIFO = snapshot.order == .lifo
            core.isSuspended = snapshot.isSuspended
            core.schedule(loop: loop)
        }
    }

    /// Decodes `operation`'s `data:` URL and delivers it as a transfer would: response, one chunk, completion.
    private static func finishDataURL(_ operation: FetchOperation) {
        guard operation.markExecuting() else { return operation.finish(.failure(.cancelled)) }
        switch DataURL.decode(operation.request.url, limit: operation.request.maximumResponseSize) {
        case .failure(let error):
            operation.finish(.failure(error))
        case .success(let (body, mediaType)):
            let response = FetchResponse(url: operation.request.url, statusCode: nil,
                                         headers: [FetchResponse.Header(name: "Content-Type", value: mediaType)],
                                         expectedContentLength: Int64(body.count))
            operation.deliver(response)
            if !body.isEmpty { operation.deliver(chunk: body, received: Int64(body.count), expected: Int64(body.count)) }
            operation.finish(.success(FetchResult(response: response, body: body)))
        }
    }

    /// Whether a transfer can serve `url`'s scheme (http, https, file).
    static func supportsScheme(of url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "http", "https", "file": return true
        default: return false
        }
    }

    /// Cancels every queued and running operation of this queue (each completes with `.cancelled`).
    public func cancelAll() {
        update { core, loop in core.cancelAll(loop: loop) }
    }

    private func update(_ change: @escaping @Sendable (FetchQueueCore, NetworkLoop) -> Void) {
        let bound = core
        thread.submit { loop in change(bound.value, loop) }
    }

    /// Runs `body` with the core on the network thread and waits for its result; nil when the thread has
    /// stopped. For tests (internal state such as the pending heap's size). Never call it on the network thread.
    func inspectCore<T: Sendable>(_ body: @escaping @Sendable (FetchQueueCore, NetworkLoop) -> T) -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let bound = core
        guard thread.submit({ loop in
            let value = body(bound.value, loop)
            result.withLock { $0 = value }
            done.signal()
        }) else { return nil }
        done.wait()
        return result.withLock { $0 }
    }
}
