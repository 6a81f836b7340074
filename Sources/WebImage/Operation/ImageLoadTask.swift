import Dispatch
import Fetcher
import Foundation
import ImageCodec
import KVCache

/// What makes two requests the same work: the memory key (cache key + thumbnail + transform + decode variant)
/// and the options that change what is loaded or decoded.
///
/// Compared by the key's bytes (`ImageCacheKey`'s `==`), as the memory and disk caches compare keys: Swift's
/// `String ==` treats canonically equivalent keys ("\u{E9}" and "e\u{301}") as equal, which would hand one
/// URL's image to another's request.
struct ImageTaskKey: Hashable, Sendable {
    let memoryKey: ImageCacheKey
    let options: UInt32

    /// Options that only concern setters or queue order do not split shared work, nor do the decode options:
    /// the memory key already names the decoded variant they make (with the cache-wide settings), so requests
    /// that decode alike share one task and requests that decode differently never do.
    static let sharedOptionsMask = ~(ImageOptions.ignorePlaceholder.rawValue | ImageOptions.avoidSetImage.rawValue
        | ImageOptions.lowPriority.rawValue | ImageOptions.highPriority.rawValue
        | ImageOptions.ignoreAnimatedImage.rawValue | ImageOptions.ignoreImageDecoding.rawValue)
}

/// Everything a load needs from the manager, captured when the request is made.
struct ImageLoadContext: Sendable {
    let url: URL
    let cacheKey: String
    let memoryKey: ImageCacheKey
    let options: ImageOptions
    let thumbnailPixelSize: Int?
    /// The decoded variant, fixed when the request is made (it is part of `memoryKey`).
    let variant: DecodeVariant
    let transform: ImageTransform?
    let fetchRequest: FetchRequest
    let cache: ImageCache?
    let queue: FetchQueue
    let decodeBudget: DecodeBudget
    /// The manager's per-variant list of failed decodes (`.ignoreFailedURL`).
    let failedDecodes: FailedDecodeList
}

/// The work shared by identical in-flight requests: disk lookup, transfer, decode, transform, store
/// (YYWebImageOperation's body). Each caller is an `ImageOperation` subscribed to it; the work stops when the
/// last one cancels.
///
/// Ownership: the manager's registry only finds a task; the work in flight keeps it alive (the disk and decode
/// closures, and the fetch's callbacks), so releasing the manager mid-request never loses a completion.
///
/// - Important: Thread-safe. Runs on image queues and the network thread.
final class ImageLoadTask: Sendable {
    let key: ImageTaskKey
    let context: ImageLoadContext
    let state = Mutex(State())
    /// Removes this task from the manager's registry (if still registered).
    let unregister: @Sendable (ImageLoadTask) -> Void
    let imageQueue: DispatchQueue
    /// The incremental decoder of partial images; only used on `imageQueue`.
    let incremental = IncrementalDecoderBox()

    struct State {
        var subscribers: [ObjectIdentifier: ImageOperation] = [:]
        /// The queue priority each caller asks for; the transfer runs at the highest.
        var priorities: [ObjectIdentifier: FetchPriority] = [:]
        var isDone = false
        var fetch: FetchOperation?
        var decodeTicket: DecodeBudget.Ticket?
        var progressive = ProgressiveState()

        /// The highest priority of the callers (`.normal` with none left).
        var priority: FetchPriority { priorities.values.max() ?? .normal }
    }

    init(key: ImageTaskKey, context: ImageLoadContext, unregister: @escaping @Sendable (ImageLoadTask) -> Void) {
        self.key = key
        self.context = context
        self.unregister = unregister
        self.imageQueue = ImageQueues.shared.nextQueue()
    }

    var isDone: Bool { state.withLock { $0.isDone } }

    /// Adds a caller asking for `priority`. Returns `false` when the work has already finished or been
    /// cancelled (start a new one). A caller asking for more than the others raises the transfer's priority
    /// (a `.highPriority` request joining a `.lowPriority` prefetch must not wait behind normal requests), and so
    /// does a decode waiting for the `DecodeBudget`.
    ///
    /// The fetch's priority is set under this task's lock, so racing callers leave it at the priority of the
    /// callers left (the setter only records the value and submits to the network thread: no callout).
    func attach(_ operation: ImageOperation, priority: FetchPriority) -> Bool {
        state.withLock { s in
            guard !s.isDone else { return false }
            guard operation.setCancelHandler({ [weak self] op in self?.detach(op) }) else { return true }
            let id = ObjectIdentifier(operation)
            s.subscribers[id] = operation
            s.priorities[id] = priority
            s.fetch?.priority = s.priority // when the fetch is made later, it takes the highest then
            s.decodeTicket?.updatePriority(s.priority.rawValue) // and a decode waiting for budget moves up too
            return true
        }
    }

    /// A caller cancelled: when it was the last one, stop the shared work; otherwise the transfer's priority
    /// follows the callers left.
    private func detach(_ operation: ImageOperation) {
        let (stopped, fetch, ticket) = state.withLock { s -> (Bool, FetchOperation?, DecodeBudget.Ticket?) in
            s.subscribers[ObjectIdentifier(operation)] = nil
            s.priorities[ObjectIdentifier(operation)] = nil
            guard s.subscribers.isEmpty, !s.isDone else {
                s.fetch?.priority = s.priority
                s.decodeTicket?.updatePriority(s.priority.rawValue)
                return (false, nil, nil)
            }
            s.isDone = true
            defer { s.fetch = nil } // the fetch's callbacks hold this task: break the cycle (no `finish` may follow)
            return (true, s.fetch, s.decodeTicket)
        }
        guard stopped else { return }
        unregister(self)
        fetch?.cancel()
        ticket?.cancel()
        schedulePartialImagesClose()
    }

    /// Completes every caller with the final result.
    func finish(image: Image?, source: ImageSource, error: WebImageError?) {
        unregister(self)
        schedulePartialImagesClose()
        let subscribers = state.withLock { s -> [ImageOperation] in
            s.fetch = nil // the fetch's callbacks hold this task: break the cycle
            guard !s.isDone else { return [] }
            s.isDone = true
            defer { s.subscribers = [:]; s.priorities = [:] }
            return Array(s.subscribers.values)
        }
        if let error {
            WebImageLog.logger.debug("image request failed", metadata: ["url": "\(context.url)", "error": "\(error)"])
        }
        for operation in subscribers { operation.finish(image: image, source: source, error: error) }
    }

    /// Every current caller (for progress and partial images).
    var subscribers: [ImageOperation] { state.withLock { Array($0.subscribers.values) } }

    // MARK: Flow

    /// Starts the flow after the memory cache missed: disk on an image queue, else the network.
    func start() {
        let options = context.options
        // A network failure lists the URL (the queue's list: every variant fails alike); a decode failure lists
        // this variant only (a full-size decode over the limits says nothing of its thumbnails).
        if options.contains(.ignoreFailedURL),
           context.queue.failedURLs.contains(context.url) || context.failedDecodes.contains(context.memoryKey) {
            finish(image: nil, source: .none, error: .inFailedURLList(context.url))
            return
        }
        if context.cache != nil, !options.contains(.ignoreDiskCache), !options.contains(.refreshImageCache) {
            // The lookup runs on the cache's I/O queue, not an image queue: a miss goes to the network at once
            // instead of waiting behind decodes, and it never overtakes a write queued before it.
            context.cache?.ioQueue.async { [self] in loadFromDisk() }
        } else {
            fetch(revalidating: nil)
        }
    }

    /// Disk step (on the cache's I/O queue): serve a cached entry (fresh, for `.useHTTPCache`), revalidate a stale one, or go to the
    /// network on a miss. A disk error or undecodable entry never fails the request: it falls through to
    /// the network (logged).
    private func loadFromDisk() {
        guard !isDone, let cache = context.cache else { return }
        let item: KVStorageItem?
        do {
            item = try cache.diskCache?.entry(forKey: context.cacheKey) // none in a memory-only cache: a miss
        } catch {
            WebImageLog.logger.warning("disk cache read failed", metadata: ["url": "\(context.url)", "error": "\(error)"])
            item = nil
        }
        guard let item else {
            WebImageLog.logger.trace("cache miss", metadata: ["url": "\(context.url)"])
            if cache.sharedTier != nil { loadFromSharedTier() } else { fetch(revalidating: nil) }
            return
        }
        let metadata = ImageCacheMetadata.decode(item.extendedData) ?? ImageCacheMetadata()
        if context.options.contains(.useHTTPCache), !isFreshForThisRequest(metadata) {
            fetch(revalidating: CachedEntry(data: item.value, metadata: metadata))
            return
        }
        imageQueue.async { [self] in
            decodeAndFinish(item.value, source: .diskCache, metadata: metadata, storesToDisk: false)
        }
    }

    /// Whether cached bytes with `metadata` may be used without asking the origin (`.useHTTPCache`): fresh, and,
    /// when their response had a `Vary`, stored for the header values this request sends.
    func isFreshForThisRequest(_ metadata: ImageCacheMetadata) -> Bool {
        guard let http = metadata.http else { return false }
        return http.isFresh() && http.matchesVary(requestHeaders: context.fetchRequest.headers)
    }

    /// Cached bytes being revalidated with a conditional request.
    struct CachedEntry: Sendable {
        let data: Data
        let metadata: ImageCacheMetadata
    }
}
