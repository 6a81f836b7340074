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
/// Several callers may want one URL (`startPrefetching` and any number of `prefetch(_:)` calls): it loads once
/// for all of them. Cancelling one `prefetch(_:)` call withdraws only that caller (its summary counts the URL
/// cancelled); the URL goes on loading for the others and stops only when nobody wants it any more.
/// `stopPrefetching` stops URLs for everyone.
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
        /// URLs asked for by `startPrefetching`, until done or stopped.
        var bulk: Set<URL> = []
        /// The `prefetch(_:)` callers waiting for each URL, by caller.
        var waiters: [URL: [Int: @Sendable (Outcome) -> Void]] = [:]
        var nextCaller = 0
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
        enqueue(urls, bulk: true)
    }

    /// Stops `urls` for every caller (`prefetch(_:)` calls waiting for them count them cancelled): waiting ones
    /// are dropped, loading ones cancelled (work shared with other requests for the same image goes on for them).
    public func stopPrefetching(with urls: [URL]) {
        let stopping = Set(urls)
        let callbacks = state.withLock { s -> [@Sendable (Outcome) -> Void] in
            s.bulk.subtract(stopping)
            return stopping.flatMap { s.waiters.removeValue(forKey: $0).map { Array($0.values) } ?? [] }
        }
        for callback in callbacks { callback(.cancelled) }
        stopUnwanted(stopping)
    }

    /// Stops those of `urls` nobody wants any more (no `startPrefetching`, no `prefetch(_:)` caller).
    private func stopUnwanted(_ urls: Set<URL>) {
        let (dropped, operations) = state.withLock { s -> (Int, [ImageOperation]) in
            let stopping = urls.filter { !s.bulk.contains($0) && s.waiters[$0] == nil }
            let dropped = s.waiting.filter { stopping.contains($0) }
            s.waiting.removeAll { stopping.contains($0) }
            s.waitingSet.subtract(dropped)
            s.summary.cancelled += dropped.count
            return (dropped.count, stopping.compactMap { s.running[$0] })
        }
        for operation in operations { operation.cancel() }  // each ends in didFinish(.cancelled)
        if dropped > 0 { reportIfDrained() }
    }

    /// Queues `urls` not already waiting or loading; `bulk` records `startPrefetching`'s interest.
    private func enqueue(_ urls: [URL], bulk: Bool) {
        state.withLock { s in
            for url in urls {
                if bulk { s.bulk.insert(url) }
                guard !s.waitingSet.contains(url), s.running[url] == nil else { continue }
                s.waiting.append(url)
                s.waitingSet.insert(url)
            }
        }
        startNext()
    }

    /// Stops everything: drops every waiting URL and cancels every loading one.
    public func stopPrefetching() {
        let urls = state.withLock { $0.waiting + Array($0.running.keys) }
        stopPrefetching(with: urls)
    }

    /// Prefetches `urls` and returns once each is done, with what happened to them.
    ///
    /// Cancelling the calling task returns promptly with the URLs not done yet counted `cancelled`; they stop
    /// loading unless another caller still wants them. In an already-cancelled task nothing is loaded.
    @discardableResult
    public func prefetch(_ urls: [URL]) async -> Summary {
        let unique = Array(NSOrderedSet(array: urls)).compactMap { $0 as? URL }
        if unique.isEmpty { return Summary() }
        let caller = state.withLock { s -> Int in s.nextCaller += 1; return s.nextCaller }
        let call = Mutex(PrefetchCall(remaining: Set(unique)))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Registering and the cancel flag share `call`'s lock: a cancel either comes first (nothing is
                // loaded) or finds every URL registered (and withdraws them).
                let registered = call.withLock { c -> Bool in
                    c.continuation = continuation
                    if c.isCancelled || Task.isCancelled { return false }
                    state.withLock { s in
                        for url in unique {
                            s.waiters[url, default: [:]][caller] = { outcome in Self.count(outcome, of: url, in: call) }
                        }
                    }
                    c.isRegistered = true
                    return true
                }
                if registered {
                    enqueue(unique, bulk: false)
                } else {
                    for url in unique { Self.count(.cancelled, of: url, in: call) }
                }
            }
        } onCancel: {
            let registered = call.withLock { c -> Bool in
                c.isCancelled = true
                return c.isRegistered
            }
            if registered { withdraw(caller, from: unique) }
        }
    }

    // MARK: Internals

    /// How one URL ended.
    enum Outcome { case loaded, alreadyCached, failed, cancelled }

    /// One `prefetch(_:)` call: the URLs it still waits for, its counts, how it returns.
    private struct PrefetchCall {
        var remaining: Set<URL>
        var summary = Summary()
        var continuation: CheckedContinuation<Summary, Never>?
        var isCancelled = false
        var isRegistered = false
    }

    /// Counts `url`'s outcome for one `prefetch(_:)` call; the last URL returns from it.
    private static func count(_ outcome: Outcome, of url: URL, in call: borrowing Mutex<PrefetchCall>) {
        let done = call.withLock { c -> (CheckedContinuation<Summary, Never>, Summary)? in
            guard c.remaining.remove(url) != nil else { return nil }
            c.summary.count(outcome)
            guard c.remaining.isEmpty, let continuation = c.continuation else { return nil }
            c.continuation = nil
            return (continuation, c.summary)
        }
        if let (continuation, summary) = done { continuation.resume(returning: summary) }
    }

    /// A `prefetch(_:)` caller was cancelled: its URLs count cancelled for it alone, and those nobody else
    /// wants stop.
    private func withdraw(_ caller: Int, from urls: [URL]) {
        let (callbacks, orphans) = state.withLock { s -> ([@Sendable (Outcome) -> Void], Set<URL>) in
            var callbacks: [@Sendable (Outcome) -> Void] = []
            var orphans = Set<URL>()
            for url in urls {
                guard let callback = s.waiters[url]?.removeValue(forKey: caller) else { continue }
                callbacks.append(callback)
                if s.waiters[url]?.isEmpty == true {
                    s.waiters[url] = nil
                    orphans.insert(url)
                }
            }
            return (callbacks, orphans)
        }
        for callback in callbacks { callback(.cancelled) }
        stopUnwanted(orphans)
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
        let callbacks = state.withLock { s -> [@Sendable (Outcome) -> Void] in
            s.running[url] = nil
            if outcome == .cancelled, s.bulk.contains(url) || s.waiters[url] != nil {
                // Stopped because its callers left, but another one came meanwhile: load it again for them.
                if !s.waitingSet.contains(url) {
                    s.waiting.append(url)
                    s.waitingSet.insert(url)
                }
                return []
            }
            s.summary.count(outcome)
            s.bulk.remove(url)
            return s.waiters.removeValue(forKey: url).map { Array($0.values) } ?? []
        }
        for callback in callbacks { callback(outcome) }
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
