import Foundation

/// Warms the caches for images the app will show soon (SDWebImagePrefetcher, Nuke's and Kingfisher's
/// ImagePrefetcher): give it URLs; it loads them through its manager at low priority, a few at a time, and
/// skips what is already cached.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(destination: .diskCache)
/// prefetcher.startPrefetching(with: nextPageURLs)
/// // later, when the user scrolled elsewhere:
/// prefetcher.stopPrefetching(with: nextPageURLs)
/// ```
///
/// - `.memoryCache` (the default) runs the whole pipeline (`requestImage`): decoded images land in the memory
///   cache and the bytes on disk, so showing them later is a memory hit.
/// - `.diskCache` only downloads the original bytes into the disk cache (no decode, no memory used): cheap
///   to do for many images; showing one later costs a disk read and a decode.
///
/// URLs wait in FIFO order; a URL already waiting or loading is not added twice. `onFinish` runs each time the
/// queue drains, with the counts since the previous drain.
///
/// - Important: Thread-safe: call it from any thread. Callbacks run on the manager's threads (network thread,
///   image or I/O queue), or on the caller's thread for URLs stopped by `stopPrefetching`.
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images end up.
    public enum Destination: Sendable, Hashable {
        /// Decoded in the memory cache (and the bytes on disk, unless the options say otherwise).
        case memoryCache
        /// The original bytes in the disk cache only; nothing decoded.
        case diskCache
    }

    /// What happened to the URLs handled since the queue last drained.
    public struct Summary: Sendable, Hashable {
        /// Loaded now (from the network, or decoded from disk into memory).
        public var loaded = 0
        /// Already where the destination wanted them (a memory hit, or bytes already on disk).
        public var alreadyCached = 0
        /// Failed (network, decode or disk error).
        public var failed = 0
        /// Stopped by `stopPrefetching` before they finished.
        public var cancelled = 0

        /// A summary with every count zero.
        public init() {}
    }

    /// The manager that loads and caches.
    public let manager: ImageManager
    /// Where images end up. Default `.memoryCache`.
    public let destination: Destination
    /// Options of every request; `.lowPriority` is always added. Default `[]`.
    public let options: ImageOptions
    /// With `.memoryCache`: decode downsampled to this longest side (the size the app will show). Default `nil`.
    public let thumbnailPixelSize: Int?
    /// How many URLs load at once. Default 2 (the manager's queue also bounds transfers).
    public let maxConcurrentRequests: Int

    private struct State {
        var waiting: [URL] = []
        var waitingSet: Set<URL> = []
        var running: [URL: ImageOperation] = [:]
        var summary = Summary()
        var onFinish: (@Sendable (Summary) -> Void)?
        /// A thread is in `startNext`'s loop; `pumpAgain` asks it for one more round (no recursion when
        /// memory hits complete inside `requestImage`).
        var pumping = false
        var pumpAgain = false
    }

    private let state = Mutex(State())

    /// Makes a prefetcher; see each property for its default.
    public init(manager: ImageManager = .shared, destination: Destination = .memoryCache, options: ImageOptions = [],
                thumbnailPixelSize: Int? = nil, maxConcurrentRequests: Int = 2) {
        self.manager = manager
        self.destination = destination
        self.options = options.union(.lowPriority).subtracting(.highPriority)
        self.thumbnailPixelSize = thumbnailPixelSize
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
    }

    /// Called with the counts each time the last waiting or loading URL is done. Default none.
    public var onFinish: (@Sendable (Summary) -> Void)? {
        get { state.withLock { $0.onFinish } }
        set { state.withLock { $0.onFinish = newValue } }
    }

    /// URLs waiting or loading now.
    public var pendingCount: Int { state.withLock { $0.waiting.count + $0.running.count } }

    /// Queues `urls` (those not already waiting or loading) and starts loading up to `maxConcurrentRequests`.
    public func startPrefetching(with urls: [URL]) {
        state.withLock { s in
            for url in urls where !s.waitingSet.contains(url) && s.running[url] == nil {
                s.waiting.append(url)
                s.waitingSet.insert(url)
            }
        }
        startNext()
    }

    /// Stops `urls`: waiting ones are dropped, loading ones cancelled (work shared with other requests for
    /// the same image goes on for them).
    public func stopPrefetching(with urls: [URL]) {
        let stopping = Set(urls)
        let (dropped, operations) = state.withLock { s -> ([URL], [ImageOperation]) in
            let dropped = s.waiting.filter { stopping.contains($0) }
            s.waiting.removeAll { stopping.contains($0) }
            s.waitingSet.subtract(stopping)
            s.summary.cancelled += dropped.count
            return (dropped, stopping.compactMap { s.running[$0] })
        }
        for url in dropped {
            for callback in waiters.withLock({ $0.removeValue(forKey: url) ?? [] }) { callback(.cancelled) }
        }
        for operation in operations { operation.cancel() }  // each ends in didFinish(.cancelled)
        if !dropped.isEmpty { reportIfDrained() }
    }

    /// Stops everything: drops every waiting URL and cancels every loading one.
    public func stopPrefetching() {
        let urls = state.withLock { $0.waiting + Array($0.running.keys) }
        stopPrefetching(with: urls)
    }

    /// Prefetches `urls` and returns once each is done (or the task is cancelled, which stops them).
    @discardableResult
    public func prefetch(_ urls: [URL]) async -> Summary {
        let unique = Array(NSOrderedSet(array: urls)).compactMap { $0 as? URL }
        let remaining = Mutex((set: Set(unique), summary: Summary(), continuation: CheckedContinuation<Summary, Never>?.none))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                remaining.withLock { $0.continuation = continuation }
                if unique.isEmpty { return continuation.resume(returning: Summary()) }
                for url in unique { load(url) { outcome in
                    let done = remaining.withLock { r -> (CheckedContinuation<Summary, Never>, Summary)? in
                        guard r.set.remove(url) != nil else { return nil }
                        r.summary.count(outcome)
                        guard r.set.isEmpty, let continuation = r.continuation else { return nil }
                        r.continuation = nil
                        return (continuation, r.summary)
                    }
                    if let (continuation, summary) = done { continuation.resume(returning: summary) }
                } }
            }
        } onCancel: {
            stopPrefetching(with: unique)
        }
    }

    // MARK: Internals

    /// How one URL ended.
    enum Outcome { case loaded, alreadyCached, failed, cancelled }

    /// Per-URL callbacks of `prefetch(_:)`, keyed by URL.
    private let waiters = Mutex<[URL: [@Sendable (Outcome) -> Void]]>([:])

    private func load(_ url: URL, then callback: @escaping @Sendable (Outcome) -> Void) {
        waiters.withLock { $0[url, default: []].append(callback) }
        startPrefetching(with: [url])
    }

    /// Starts waiting URLs while fewer than `maxConcurrentRequests` load. One thread at a time runs the loop;
    /// a call meanwhile makes it go round once more.
    private func startNext() {
        let pumps = state.withLock { s -> Bool in
            if s.pumping { s.pumpAgain = true; return false }
            s.pumping = true
            return true
        }
        guard pumps else { return }
        repeat { startWaiting() } while state.withLock { s -> Bool in
            if s.pumpAgain { s.pumpAgain = false; return true }
            s.pumping = false
            return false
        }
    }

    private func startWaiting() {
        while let url = state.withLock({ s -> URL? in
            guard s.running.count < maxConcurrentRequests, !s.waiting.isEmpty else { return nil }
            let url = s.waiting.removeFirst()
            s.waitingSet.remove(url)
            // Reserve the slot before the request starts: a memory hit completes inside `requestImage`.
            s.running[url] = ImageOperation(url: url, progress: nil) { _, _, _, _, _ in }
            return url
        }) {
            let placeholder = state.withLock { $0.running[url] }
            let completion: ImageCompletion = { [weak self] image, url, source, stage, error in
                guard stage != .progress else { return }
                let outcome: Outcome
                switch (stage, error, source) {
                case (.cancelled, _, _): outcome = .cancelled
                case (_, .some, _): outcome = .failed
                case (_, nil, .memoryCache), (_, nil, .memoryCacheFast): outcome = .alreadyCached
                case (_, nil, .diskCache): outcome = self?.destination == .diskCache ? .alreadyCached : .loaded
                case (_, nil, .remote), (_, nil, .sharedCache): outcome = .loaded
                case (_, nil, .none): outcome = .failed  // a disk prefetch through a manager without a disk cache
                }
                self?.didFinish(url, outcome)
            }
            let operation = destination == .memoryCache
                ? manager.requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize, completion: completion)
                : manager.prefetchToDisk(url: url, options: options, completion: completion)
            // Keep the real operation unless it already finished (a memory hit) and freed the slot.
            let stillRunning = state.withLock { s -> Bool in
                guard s.running[url] != nil else { return false }
                s.running[url] = operation
                return true
            }
            // Stopped while the request was being made: stop the real one too.
            if stillRunning, placeholder?.isCancelled == true { operation.cancel() }
        }
    }

    private func didFinish(_ url: URL, _ outcome: Outcome) {
        state.withLock { s in
            s.running[url] = nil
            s.summary.count(outcome)
        }
        for callback in waiters.withLock({ $0.removeValue(forKey: url) ?? [] }) { callback(outcome) }
        startNext()
        reportIfDrained()
    }

    /// Runs `onFinish` with the summary if nothing is waiting or loading and something happened since the
    /// last report, and starts a new summary.
    private func reportIfDrained() {
        let report = state.withLock { s -> (@Sendable (Summary) -> Void, Summary)? in
            guard s.waiting.isEmpty, s.running.isEmpty, s.summary != Summary() else { return nil }
            let summary = s.summary
            s.summary = Summary()
            return s.onFinish.map { ($0, summary) }
        }
        if let (onFinish, summary) = report { onFinish(summary) }
    }
}

extension ImagePrefetcher.Summary {
    mutating func count(_ outcome: ImagePrefetcher.Outcome) {
        switch outcome {
        case .loaded: loaded += 1
        case .alreadyCached: alreadyCached += 1
        case .failed: failed += 1
        case .cancelled: cancelled += 1
        }
    }
}
