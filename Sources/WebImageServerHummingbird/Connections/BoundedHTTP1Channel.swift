import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import WebImageSync

/// Open client connections, at most `limit` at once.
///
/// - Important: Thread-safe.
final class ConnectionLimiter: Sendable {
    let limit: Int
    private let count = Mutex(0)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes a place, or returns false when all `limit` are taken.
    func open() -> Bool {
        count.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives a place back.
    func close() {
        count.withLock { $0 -= 1 }
    }

    /// Connections open now.
    var openCount: Int { count.withLock { $0 } }
}

/// Hummingbird's HTTP/1.1 child channel with the server's bounds around it: at most `limiter.limit` connections
/// (one past it is answered 503 and closed at once, never queued: the listen backlog would hold it for as long as
/// the others stay, and every connection holds a descriptor and its buffers), each request bounded in time and
/// body size (`RequestBounds`), its output bounded by `OutputBackpressureHandler`.
///
/// - Important: Thread-safe (a value of `Sendable` parts); `setup` runs on the child channel's event loop.
struct BoundedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let limiter: ConnectionLimiter
    let requestTimeout: TimeAmount?
    let maxRequestBodySize: Int
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard limiter.open() else {
            self.logger.info("connection refused: the connection limit is reached", metadata: ["limit": "\(limiter.limit)"])
            do {
                try channel.pipeline.syncOperations.addHandler(RefuseConnectionHandler(), position: .first)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            // Still a whole HTTP channel for Hummingbird, which sees it close at once.
            return base.setup(channel: channel, logger: logger)
        }
        let limiter = self.limiter
        channel.closeFuture.whenComplete { _ in limiter.close() }
        do {
            let bounds = RequestBounds(timeout: requestTimeout, maxBodySize: maxRequestBodySize)
            try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(bounds: bounds), position: .first)
            try channel.pipeline.syncOperations.addHandler(OutputBackpressureHandler(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let raw = try operations.handler(type: RequestDeadlineHandler.self)
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(RequestBodyLimitHandler(deadlineHandler: raw), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Answers `503 Service Unavailable` with `Retry-After: 1` as soon as the connection is active, reads nothing, and
/// closes: a connection past the limit.
///
/// - Important: Not thread-safe: confined to its channel's event loop.
final class RefuseConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private var isRefused = false

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
    }

    private func refuse(context: ChannelHandlerContext) {
        guard !isRefused else { return }
        isRefused = true
        let text = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(NIOAny(channel.allocator.buffer(string: text))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
