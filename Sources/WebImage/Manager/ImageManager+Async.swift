import Foundation
import ImageCodec
import Synchronization

/// One event of an image request, for `ImageManager.imageEvents(for:)`.
public enum ImageEvent: Sendable {
    /// Download progress: bytes received and expected (`nil` when unknown).
    case progress(received: Int64, expected: Int64?)
    /// A partial image (`.progressive` / `.progressiveBlur`).
    case partial(Image)
    /// The final image and where it came from. The last event.
    case finished(Image, ImageSource)
}

extension ImageManager {
    /// Loads the image at `url`, with the options of the callback API: a thumbnail size, a transform
    /// (default `sharedTransform`) and download progress. Cancelling the calling task cancels the request.
    ///
    /// ```swift
    /// let avatar = try await manager.image(for: url, thumbnailPixelSize: 96, transform: circleCrop) { received, expected in
    ///     print(received, expected ?? -1)
    /// }
    /// ```
    ///
    /// - Throws: `WebImageError`, or `CancellationError` when the task was cancelled.
    /// - Important: `progress` runs on the network thread; keep it short.
    public func image(for url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil,
                      transform: ImageTransform? = nil, progress: ImageProgress? = nil) async throws -> Image {
        let slot = Mutex<ImageOperation?>(nil)
        let result: Result<Image, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let operation = requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize,
                                             progress: progress, transform: transform) { image, _, _, stage, error in
                    switch stage {
                    case .progress: return
                    case .cancelled: continuation.resume(returning: .failure(CancellationError()))
                    case .finished:
                        if let image { continuation.resume(returning: .success(image)) }
                        else { continuation.resume(returning: .failure(error ?? WebImageError.transformFailed(url))) }
                    }
                }
                slot.withLock { $0 = operation }
                if Task.isCancelled { operation.cancel() }
            }
        } onCancel: {
            slot.withLock { $0 }?.cancel()
        }
        return try result.get()
    }

    /// The events of one request — progress, partial images, then the final image — as an async sequence.
    /// Ending the iteration early cancels the request; cancelling its task cancels the request and makes the
    /// sequence throw `CancellationError`.
    ///
    /// A consumer slower than the download does not make partial images pile up: only the newest one waits
    /// (it replaces an older one not yet read, as `bufferingNewest(1)` would for partials alone), so a
    /// request holds at most one partial image however slow its reader. Progress events and the final image
    /// are never dropped, and keep their order.
    ///
    /// ```swift
    /// for try await event in manager.imageEvents(for: url, options: [.progressive]) {
    ///     if case .partial(let image) = event { show(image) }
    /// }
    /// ```
    ///
    /// - Important: The request starts at once. Iterate the sequence from one task at a time.
    public func imageEvents(for url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil)
        -> ImageEvents {
        let buffer = ImageEventBuffer()
        let canceller = ImageEventCanceller()
        let operation = requestImage(
            url: url, options: options, thumbnailPixelSize: thumbnailPixelSize,
            progress: { received, expected in buffer.yield(.progress(received: received, expected: expected)) }
        ) { image, _, source, stage, error in
            switch stage {
            case .progress:
                if let image { buffer.yield(.partial(image)) }
            case .cancelled:
                buffer.finish(throwing: CancellationError())
            case .finished:
                if let image {
                    buffer.yield(.finished(image, source))
                    buffer.finish()
                } else {
                    buffer.finish(throwing: error ?? WebImageError.transformFailed(url))
                }
            }
        }
        canceller.set(operation)
        // Pull-based: the sequence holds nothing itself. Dropping the iterator (ending the iteration) cancels the
        // request even while the sequence is held; dropping a sequence never iterated does too (`canceller`), and a
        // cancelled task cancels it.
        return ImageEvents(buffer: buffer, canceller: canceller)
    }
}
