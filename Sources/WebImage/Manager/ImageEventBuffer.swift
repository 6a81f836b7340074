import Foundation
import ImageCodec

/// The events of one `imageEvents` request waiting for their consumer, holding at most one partial image.
///
/// A consumer slower than the download used to find every partial image of a progressive download queued in
/// the stream (24 MB of partials for a slow reader, against the 8 MB share partials have in the decode
/// budget). Partial images are snapshots that each supersede the one before, so a new one replaces a partial
/// still waiting (it moves to the end, after the progress events that came in between): `bufferingNewest(1)`
/// for partials. Progress events and the final event are never dropped; they are small.
///
/// - Important: Thread-safe. One consumer at a time calls `next()` (as the `ImageEvents` iterator
///   does); continuations are resumed outside the lock.
final class ImageEventBuffer: Sendable {
    private struct State {
        var events: [ImageEvent] = []
        /// The index in `events` of the partial image waiting, if any.
        var partialIndex: Int?
        /// How the request ended (`nil`: still running), delivered after the events before it.
        var end: Result<Void, any Error>?
        var isEndDelivered = false
        var waiter: CheckedContinuation<ImageEvent?, any Error>?
    }

    private let state = Mutex(State())

    /// Queues `event`, or hands it to a consumer waiting for one. A partial image replaces the one waiting.
    func yield(_ event: ImageEvent) {
        let waiter = state.withLock { s -> CheckedContinuation<ImageEvent?, any Error>? in
            guard s.end == nil else { return nil }
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter
            }
            if case .partial = event {
                if let index = s.partialIndex { s.events.remove(at: index) }
                s.partialIndex = s.events.count
            }
            s.events.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the sequence after the events queued: normally, or with `error`. Only the first end counts.
    func finish(throwing error: (any Error)? = nil) {
        let waiter = state.withLock { s -> CheckedContinuation<ImageEvent?, any Error>? in
            guard s.end == nil else { return nil }
            s.end = error.map { .failure($0) } ?? .success(())
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            s.isEndDelivered = true
            return waiter
        }
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    /// The next event, waiting for one; `nil` after the end (the end's error is thrown once).
    func next() async throws -> ImageEvent? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ImageEvent?, any Error>) in
            let ready = state.withLock { s -> Result<ImageEvent?, any Error>? in
                if !s.events.isEmpty {
                    let event = s.events.removeFirst()
                    if let index = s.partialIndex { s.partialIndex = index == 0 ? nil : index - 1 }
                    return .success(event)
                }
                if let end = s.end {
                    guard !s.isEndDelivered else { return .success(nil) }
                    s.isEndDelivered = true
                    switch end {
                    case .success: return .success(nil)
                    case .failure(let error): return .failure(error)
                    }
                }
                precondition(s.waiter == nil, "imageEvents: one consumer at a time")
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

}

/// Cancels a request when the sequence that consumes its events is gone (the consumer stopped iterating).
/// Held only by the sequence, never by the request's callbacks, so its `deinit` runs when the consumer lets go.
final class ImageEventCanceller: Sendable {
    private let operation = Mutex<ImageOperation?>(nil)

    func set(_ operation: ImageOperation) { self.operation.withLock { $0 = operation } }

    func cancel() { operation.withLock { $0 }?.cancel() }

    deinit { operation.withLock { $0 }?.cancel() }
}

/// Cancels a request when the iterator that consumes its events is gone, even while its sequence is still held
/// (a loop over a sequence in a variable, left with `break`, drops only the iterator). Held only by the iterator.
final class ImageEventIteratorLifetime: Sendable {
    private let canceller: ImageEventCanceller

    init(_ canceller: ImageEventCanceller) { self.canceller = canceller }

    deinit { canceller.cancel() }
}
