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
    /// Loads the image at `url`. Cancelling the calling task cancels the request.
    ///
    /// - Throws: `WebImageError`, or `CancellationError` when the task was cancelled.
    public func image(for url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil) async throws -> Image {
        let slot = Mutex<ImageOperation?>(nil)
        let result: Result<Image, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let operation = requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize) { image, _, _, stage, error in
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
    /// Ending the iteration early (or cancelling its task) cancels the request.
    ///
    /// ```swift
    /// for try await event in manager.imageEvents(for: url, options: [.progressive]) {
    ///     if case .partial(let image) = event { show(image) }
    /// }
    /// ```
    public func imageEvents(for url: URL, options: ImageOptions = [], thumbnailPixelSize: Int? = nil)
        -> AsyncThrowingStream<ImageEvent, any Error> {
        AsyncThrowingStream { continuation in
            let operation = requestImage(
                url: url, options: options, thumbnailPixelSize: thumbnailPixelSize,
                progress: { received, expected in continuation.yield(.progress(received: received, expected: expected)) }
            ) { image, _, source, stage, error in
                switch stage {
                case .progress:
                    if let image { continuation.yield(.partial(image)) }
                case .cancelled:
                    continuation.finish(throwing: CancellationError())
                case .finished:
                    if let image {
                        continuation.yield(.finished(image, source))
                        continuation.finish()
                    } else {
                        continuation.finish(throwing: error ?? WebImageError.transformFailed(url))
                    }
                }
            }
            continuation.onTermination = { _ in operation.cancel() }
        }
    }
}
