import NIOCore
import NIOHTTP1

/// The bounds of one connection's requests in time and size, shared by its two handlers (`RequestDeadlineHandler`
/// on the raw bytes, `RequestBodyLimitHandler` on the parsed parts).
///
/// A request starts with its first byte and ends with its last (the end of its body): it must end within
/// `timeout`, however its bytes trickle, head and body alike. The idle timeout alone closed a trickling head, but a
/// GET whose body came one byte at a time stayed open for ever (each byte is a complete body part). The time a
/// response takes to make is not counted (the request has ended by then), nor the keep-alive wait between
/// requests (the idle timeout bounds that).
///
/// - Important: Not thread-safe: confined to its channel's event loop.
final class RequestBounds {
    enum State { case idle, reading(headSeen: Bool) }

    let timeout: TimeAmount?
    let maxBodySize: Int
    var state = State.idle
    /// Response heads written minus response ends written: a response is being written when above 0.
    var openResponses = 0
    var bodyBytes = 0
    var deadline: Scheduled<Void>?

    init(timeout: TimeAmount?, maxBodySize: Int) {
        self.timeout = timeout
        self.maxBodySize = maxBodySize
    }

    /// The first byte of a request (raw bytes while idle, or a parsed head while idle): start its deadline.
    func requestStarted(context: ChannelHandlerContext, onExpiry: @escaping () -> Void) {
        guard case .idle = state else { return }
        state = .reading(headSeen: false)
        bodyBytes = 0
        guard let timeout else { return }
        let handler = NIOLoopBound(onExpiry, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) { handler.value() }
    }

    /// The request's last byte arrived.
    func requestEnded() {
        state = .idle
        deadline?.cancel()
        deadline = nil
    }

    /// The connection closed.
    func closed() {
        deadline?.cancel()
        deadline = nil
    }
}

/// The first handler of a connection: starts a request's deadline on its first byte, and when the deadline passes
/// before the request's end, answers `408 Request Timeout` (when nothing else is being written) and closes.
///
/// - Important: Not thread-safe: confined to its channel's event loop.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let bounds: RequestBounds

    init(bounds: RequestBounds) {
        self.bounds = bounds
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        startDeadline(context: context)
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        bounds.closed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        bounds.closed()
    }

    /// Starts the deadline of a request if none is running (also called by the parsed-part handler on a head that
    /// came whole in the read of the previous request's end).
    func startDeadline(context: ChannelHandlerContext) {
        let bounded = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        bounds.requestStarted(context: context) {
            let (handler, context) = bounded.value
            handler.expire(context: context)
        }
    }

    private func expire(context: ChannelHandlerContext) {
        guard case .reading(let headSeen) = bounds.state else { return }
        bounds.deadline = nil
        if !headSeen, bounds.openResponses == 0 {
            respond(context: context, status: "408 Request Timeout")
        } else {
            context.close(promise: nil)
        }
    }

    /// Writes a bodiless `status` answer straight to the socket, then closes: for requests refused before their
    /// head reached the router (so nothing else answers them).
    func respond(context: ChannelHandlerContext, status: String) {
        let text = "HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(NIOAny(channel.allocator.buffer(string: text))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Counts a request's parts right after the HTTP decoder: ends the request's deadline at its end, and refuses a
/// body over `maxBodySize` (a declared `Content-Length` over it: 413 and close, the head never reaches the router;
/// a chunked body that grows past it: close). Counts the responses written, so that a 408 or 413 is never written
/// into another response.
///
/// - Important: Not thread-safe: confined to its channel's event loop.
final class RequestBodyLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let deadlineHandler: RequestDeadlineHandler
    var bounds: RequestBounds { deadlineHandler.bounds }
    /// Set once the connection is being closed for a refused body: nothing more is forwarded.
    private var isRefusing = false

    init(deadlineHandler: RequestDeadlineHandler) {
        self.deadlineHandler = deadlineHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefusing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if case .idle = bounds.state, let raw = try? context.pipeline.syncOperations.context(handler: deadlineHandler) {
                deadlineHandler.startDeadline(context: raw)
            }
            bounds.state = .reading(headSeen: true)
            let declared = head.headers["content-length"].first.flatMap { Int($0.trimmingSpaces) }
            if let declared, declared > bounds.maxBodySize {
                refuse(context: context, answering: bounds.openResponses == 0)
                return
            }
        case .body(let buffer):
            bounds.bodyBytes += buffer.readableBytes
            if bounds.bodyBytes > bounds.maxBodySize {
                refuse(context: context, answering: false)
                return
            }
        case .end:
            bounds.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: bounds.openResponses += 1
        case .end: bounds.openResponses -= 1
        case .body: break
        }
        context.write(data, promise: promise)
    }

    private func refuse(context: ChannelHandlerContext, answering: Bool) {
        isRefusing = true
        bounds.requestEnded()
        if answering, let raw = try? context.pipeline.syncOperations.context(handler: deadlineHandler) {
            deadlineHandler.respond(context: raw, status: "413 Content Too Large")
        } else {
            context.close(promise: nil)
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
