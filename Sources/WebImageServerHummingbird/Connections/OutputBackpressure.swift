import Hummingbird
import NIOCore
import WebImageSync

/// Lets a response body wait until its connection takes more bytes.
///
/// Hummingbird's body writer hands each buffer to the event loop and returns at once while the channel is
/// writable, and the channel turns unwritable only once the loop has run those writes: a writer in a tight loop
/// queued the whole body before the first `channelWritabilityChanged` (24 clients that never read a 10 MB result
/// held 5.5 MB each in pending writes). `waitUntilWritable(_:)` runs on the event loop after every write queued
/// before it, so it sees their effect: a response then holds at most one chunk beyond the channel's high-water
/// mark (64 KiB).
///
/// - Important: Not thread-safe: confined to its channel's event loop; `waitUntilWritable` may be called from
///   any task.
final class OutputBackpressureHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var waiters: [Waiter] = []

    /// One wait: its promise is completed once, by whoever claims it first (writable, closed, or cancelled).
    final class Waiter: Sendable {
        let promise: EventLoopPromise<Void>
        private let isDone = Mutex(false)

        init(promise: EventLoopPromise<Void>) {
            self.promise = promise
        }

        func complete(_ error: (any Error)?) {
            guard isDone.withLock({ done -> Bool in defer { done = true }; return !done }) else { return }
            if let error { promise.fail(error) } else { promise.succeed() }
        }
    }

    /// Completes once `channel` is writable (at once if it is); throws when the channel closes first or the
    /// calling task is cancelled (a graceful shutdown escalated to cancellation must not wait for a client that
    /// never reads). A channel without this handler completes at once.
    static func waitUntilWritable(_ channel: any Channel) async throws {
        let waiter = Waiter(promise: channel.eventLoop.makePromise(of: Void.self))
        try await withTaskCancellationHandler {
            channel.eventLoop.execute {
                guard channel.isActive else { return waiter.complete(ChannelError.ioOnClosedChannel) }
                guard !channel.isWritable,
                      let handler = try? channel.pipeline.syncOperations.handler(type: OutputBackpressureHandler.self)
                else { return waiter.complete(nil) }
                handler.waiters.append(waiter)
            }
            try await waiter.promise.futureResult.get()
        } onCancel: {
            waiter.complete(CancellationError())
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { release(nil) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        release(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release(ChannelError.ioOnClosedChannel)
    }

    private func release(_ error: (any Error)?) {
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter.complete(error) }
    }
}

/// The request context of `ImageServer`'s router: Hummingbird's basic one and the connection's channel, so that a
/// response body can wait for the connection (`OutputBackpressureHandler`).
///
/// - Important: A value type; thread-safe.
struct ImageRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
