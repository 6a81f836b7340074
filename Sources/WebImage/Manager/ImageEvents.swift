import Foundation
import ImageCodec

/// The events of one image request — progress, partial images, then the final image — as an async sequence,
/// from `ImageManager.imageEvents(for:options:thumbnailPixelSize:)`.
///
/// The sequence ends after `.finished`, or throws the request's error. Cancelling the consuming task cancels
/// the request and the sequence throws `CancellationError` — also when the cancel arrives between two events,
/// where an `AsyncThrowingStream(unfolding:)` would end quietly with `nil` and look like a request that
/// finished without an image. Letting go of an iterator (ending the loop early) cancels the request too, even
/// while the sequence itself is still held (`let events = …; for try await e in events { … break }`); so does
/// letting go of a sequence never iterated.
///
/// A consumer slower than the download holds at most one partial image: a new partial replaces one not yet
/// read. Progress events and the final image are never dropped, and keep their order.
///
/// - Important: `Sendable`; iterate it from one task at a time (a second concurrent `next()` is a
///   programming error and traps).
public struct ImageEvents: AsyncSequence, Sendable {
    /// One event of the request.
    public typealias Element = ImageEvent

    private let buffer: ImageEventBuffer
    private let canceller: ImageEventCanceller

    init(buffer: ImageEventBuffer, canceller: ImageEventCanceller) {
        self.buffer = buffer
        self.canceller = canceller
    }

    /// The iterator of the request's events. Not meant to be shared between tasks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: ImageEventBuffer
        let canceller: ImageEventCanceller
        /// Shared by the copies of this iterator: when the last one is gone (the loop ended), the request is
        /// cancelled, whether or not the sequence is still held.
        let lifetime: ImageEventIteratorLifetime

        /// The next event, waiting for it; `nil` after `.finished`. Throws the request's error, or
        /// `CancellationError` when the calling task is (or gets) cancelled before the request finished.
        public mutating func next() async throws -> ImageEvent? {
            // A task already cancelled runs `onCancel` at once: the request is cancelled and its `.cancelled`
            // end reaches the buffer, so this throws instead of waiting (events queued before it come first).
            try await withTaskCancellationHandler {
                try await buffer.next()
            } onCancel: { [canceller] in
                canceller.cancel()
            }
        }
    }

    /// An iterator over the request's events. The request is shared: make one iterator per sequence (letting
    /// go of an iterator cancels the request).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffer: buffer, canceller: canceller, lifetime: ImageEventIteratorLifetime(canceller))
    }
}
