import Foundation
import ImageCodec

/// The completion of an image request: image (or `nil`), URL, source, stage and error.
///
/// Called once with `.finished` or `.cancelled`, possibly after calls with `.progress` (partial images).
public typealias ImageCompletion = @Sendable (_ image: Image?, _ url: URL, _ source: ImageSource, _ stage: ImageStage,
                                              _ error: WebImageError?) -> Void

/// Download progress: bytes received so far and the expected total (`nil` when unknown).
public typealias ImageProgress = @Sendable (_ received: Int64, _ expected: Int64?) -> Void

/// One caller's image request, returned at once by `ImageManager.requestImage`: cancel it at any moment
/// (YYWebImageOperation).
///
/// Identical requests in flight share one transfer and one decode; each keeps its own operation, and
/// cancelling one never affects the others.
///
/// - Important: Thread-safe. Its completion runs exactly once.
public final class ImageOperation: Sendable {
    /// The requested URL.
    public let url: URL
    private let state: Mutex<State>

    private struct State {
        var completion: ImageCompletion?
        var progress: ImageProgress?
        var onCancel: (@Sendable (ImageOperation) -> Void)?
        var isCancelled = false
        /// Partial images and progress calls running now (user code, called outside the lock).
        var deliveries = 0
        /// The terminal call, held back while `deliveries > 0`; the last delivery to end runs it.
        var heldTerminal: (@Sendable () -> Void)?
    }

    init(url: URL, progress: ImageProgress?, completion: @escaping ImageCompletion) {
        self.url = url
        self.state = Mutex(State(completion: completion, progress: progress))
    }

    /// Whether the operation has completed (finished or cancelled).
    public var isFinished: Bool { state.withLock { $0.completion == nil } }

    /// Whether `cancel()` was called before it finished.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Cancels: the completion runs at once (on the calling thread) with stage `.cancelled`, unless it already
    /// ran — or, when a partial image or a progress call is being delivered on another thread at that moment,
    /// right after that call returns, on that thread (the terminal call never overlaps or precedes them).
    /// Work shared with other callers goes on for them; it stops when its last caller cancels.
    public func cancel() {
        let (completion, onCancel) = state.withLock { s -> (ImageCompletion?, (@Sendable (ImageOperation) -> Void)?) in
            guard let completion = s.completion else { return (nil, nil) }
            s.completion = nil
            s.progress = nil
            s.isCancelled = true
            defer { s.onCancel = nil }
            return (completion, s.onCancel)
        }
        guard let completion else { return }
        let url = url
        deliverTerminal { completion(nil, url, .none, .cancelled, nil) }
        onCancel?(self)
    }

    /// Sets what `cancel()` tells the shared work. Returns `false` if the operation already completed.
    func setCancelHandler(_ handler: @escaping @Sendable (ImageOperation) -> Void) -> Bool {
        state.withLock { s in
            guard s.completion != nil else { return false }
            s.onCancel = handler
            return true
        }
    }

    /// Delivers the final result; does nothing if the operation already completed.
    func finish(image: Image?, source: ImageSource, error: WebImageError?) {
        let completion = state.withLock { s -> ImageCompletion? in
            defer { s.completion = nil; s.progress = nil; s.onCancel = nil }
            return s.completion
        }
        guard let completion else { return }
        let url = url
        deliverTerminal { completion(image, url, source, .finished, error) }
    }

    /// Delivers a partial image (stage `.progress`) unless the operation completed.
    func deliverPartial(_ image: Image) {
        guard let completion = beginDelivery({ $0.completion }) else { return }
        completion(image, url, .remote, .progress, nil)
        endDelivery()
    }

    /// Delivers download progress unless the operation completed.
    func deliverProgress(received: Int64, expected: Int64?) {
        guard let progress = beginDelivery({ $0.progress }) else { return }
        progress(received, expected)
        endDelivery()
    }

    // MARK: Ordering of callbacks

    /// Takes a callback for a non-terminal delivery and counts it as running; nil once completed.
    private func beginDelivery<T>(_ pick: (State) -> T?) -> T? {
        state.withLock { s -> T? in
            guard s.completion != nil, s.heldTerminal == nil, let callback = pick(s) else { return nil }
            s.deliveries += 1
            return callback
        }
    }

    /// Ends a delivery; the last one runs a terminal call held back meanwhile.
    private func endDelivery() {
        let terminal = state.withLock { s -> (@Sendable () -> Void)? in
            s.deliveries -= 1
            guard s.deliveries == 0 else { return nil }
            defer { s.heldTerminal = nil }
            return s.heldTerminal
        }
        terminal?()
    }

    /// Runs the terminal call now, or holds it until the deliveries running now have returned.
    private func deliverTerminal(_ call: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            guard s.deliveries > 0 else { return true }
            s.heldTerminal = call
            return false
        }
        if runNow { call() }
    }
}
