import Dispatch
import Foundation
import ImageCodec
import Synchronization

/// Binds a target to at most one image request at a time, so that the latest request always wins and a stale
/// image is never shown (YYWebImage's `_YYWebImageSetter`, without its race).
///
/// Each `setImage` bumps an atomic sentinel *before* starting new work and cancels the previous operation; a
/// result is applied only if the sentinel it captured is still current — otherwise its caller sees
/// `.cancelled`.
///
/// - Important: Thread-safe. Call `setImage` from the target's display queue if you want memory-cache hits
///   applied synchronously (as UIKit setters do on the main thread); from elsewhere they are applied on the
///   display queue like any other result.
public final class ImageSetter: Sendable {
    private let sentinel = Atomic<UInt64>(0)
    private let current = Mutex<Current>(Current())

    private struct Current {
        var operation: ImageOperation?
        var url: URL?
    }

    /// Makes a setter with no request.
    public init() {}

    /// The URL of the latest request (nil after `cancel()`).
    public var imageURL: URL? { current.withLock { $0.url } }

    /// The current generation; bumped by every `setImage`, `cancel` and `cancel(newURL:)`.
    public var currentSentinel: UInt64 { sentinel.load(ordering: .acquiring) }

    /// Cancels the current request (its caller gets `.cancelled`) and makes any result in flight stale.
    public func cancel() { cancel(newURL: nil) }

    /// Cancels the current request and records `newURL` as the one the target now wants.
    @discardableResult
    public func cancel(newURL: URL?) -> UInt64 {
        let (operation, generation) = current.withLock { c -> (ImageOperation?, UInt64) in
            let generation = sentinel.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
            defer { c.operation = nil; c.url = newURL }
            return (c.operation, generation)
        }
        operation?.cancel()
        return generation
    }

    /// Requests `url` for a target and applies the result through `apply` on `queue`, unless a newer request
    /// replaced it.
    ///
    /// - Parameters:
    ///   - url: the image to show; `nil` cancels the current request and shows the placeholder, and then
    ///     `completion` is not called (YYWebImage's rule).
    ///   - placeholder: shown (through `apply`) while loading, unless `.ignorePlaceholder`.
    ///   - options: see `ImageOptions`. Default none.
    ///   - thumbnailPixelSize: decode downsampled to at most this longest side. Default `nil` (full size).
    ///   - manager: the manager that loads it. Default `ImageManager.shared`.
    ///   - queue: where `apply`, `progress` and `completion` run (the target's display queue).
    ///   - apply: shows an image on the target (not called with `.avoidSetImage`).
    ///   - progress: download progress. Default `nil`.
    ///   - transform: applied after decoding. Default `nil` (the manager's `sharedTransform`).
    ///   - completion: exactly once per call with a URL, with `.cancelled` if a newer request replaced this one.
    public func setImage(with url: URL?, placeholder: Image? = nil, options: ImageOptions = [],
                         thumbnailPixelSize: Int? = nil, manager: ImageManager = .shared, queue: DispatchQueue,
                         apply: @escaping @Sendable (Image?) -> Void,
                         progress: ImageProgress? = nil, transform: ImageTransform? = nil,
                         completion: ImageCompletion?) {
        let generation = cancel(newURL: url)
        guard let url else {
            // No URL: show the placeholder; there is no request to complete.
            queue.async { [self] in
                guard currentSentinel == generation else { return }
                if !options.contains(.ignorePlaceholder) { apply(placeholder) }
            }
            return
        }
        // Memory hit: applied at once — synchronously when already on the target's queue.
        if let image = manager.memoryImage(for: url, options: options, thumbnailPixelSize: thumbnailPixelSize, transform: transform) {
            let deliver: @Sendable () -> Void = { [self] in
                guard currentSentinel == generation else {
                    completion?(nil, url, .none, .cancelled, nil)
                    return
                }
                if !options.contains(.avoidSetImage) { apply(image) }
                completion?(image, url, .memoryCacheFast, .finished, nil)
            }
            if DispatchQueue.isCurrent(queue) { deliver() } else { queue.async(execute: deliver) }
            return
        }
        if !options.contains(.ignorePlaceholder) {
            queue.async { [self] in if currentSentinel == generation { apply(placeholder) } }
        }
        var wrappedProgress: ImageProgress?
        if let progress {
            wrappedProgress = { @Sendable (received: Int64, expected: Int64?) -> Void in
                // A stale request's progress is dropped like its partial images.
                queue.async { [self] in if currentSentinel == generation { progress(received, expected) } }
            }
        }
        let operation = manager.requestImage(
            url: url, options: options, thumbnailPixelSize: thumbnailPixelSize, progress: wrappedProgress,
            transform: transform
        ) { [self] image, url, source, stage, error in
            queue.async { [self] in
                guard currentSentinel == generation else {
                    // Partial images of a stale request are dropped; its last call says cancelled.
                    if stage != .progress { completion?(nil, url, .none, .cancelled, nil) }
                    return
                }
                if let image, stage != .cancelled, !options.contains(.avoidSetImage) { apply(image) }
                completion?(image, url, source, stage, error)
            }
        }
        let stale = current.withLock { c -> Bool in
            guard currentSentinel == generation else { return true }
            c.operation = operation
            return false
        }
        if stale { operation.cancel() }
    }
}

extension DispatchQueue {
    /// Whether the calling code runs on `queue` (checked with a queue-specific key set on first use).
    static func isCurrent(_ queue: DispatchQueue) -> Bool {
        let key = QueueIdentity.key
        let identity = ObjectIdentifier(queue)
        if queue.getSpecific(key: key) == nil { queue.setSpecific(key: key, value: QueueIdentity(identity)) }
        return DispatchQueue.getSpecific(key: key)?.id == identity
    }
}

/// Names a queue for `DispatchQueue.isCurrent`.
final class QueueIdentity: Sendable {
    static let key = DispatchSpecificKey<QueueIdentity>()
    let id: ObjectIdentifier
    init(_ id: ObjectIdentifier) { self.id = id }
}
