import Foundation
import NIOCore
import NIOHTTP1

/// One connection of `HTTPTestServer`: decodes requests (NIO's `HTTPRequestDecoder` sits before it) and writes
/// responses as raw bytes, so it can break HTTP framing on purpose.
///
/// Confined to its channel's event loop (NIO handler rules). Requests are answered one at a time, in order.
final class HTTPTestConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private let box: ServerBox
    private var head: HTTPRequestHead?
    private var waiting: [HTTPTestServer.Request] = []
    private var isBusy = false
    private var isClosed = false

    init(box: ServerBox) {
        self.box = box
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
        case .body:
            break // request bodies are ignored
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let path = requestHead.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first
            waiting.append(HTTPTestServer.Request(
                method: requestHead.method.rawValue,
                uri: requestHead.uri,
                path: path.map(String.init) ?? requestHead.uri,
                headers: requestHead.headers.map { (name: $0.name, value: $0.value) }
            ))
            respondToNext(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A malformed request or a client reset: drop the connection, as a real server would.
        context.close(promise: nil)
    }

    private func respondToNext(context: ChannelHandlerContext) {
        guard !isBusy, !isClosed, !waiting.isEmpty else { return }
        isBusy = true
        let request = waiting.removeFirst()
        let handler = box.server?.receive(request)
        let response = handler?(request) ?? .status(404, body: "no route for \(request.path)")
        let plan = ResponsePlan(request: request, response: response)
        if response.delay > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(response.delay * 1e9))) {
                self.send(plan, context: context)
            }
        } else {
            send(plan, context: context)
        }
    }

    private func send(_ plan: ResponsePlan, context: ChannelHandlerContext) {
        guard !isClosed else { return }
        write(plan.head, context: context)
        if let stream = plan.stream {
            return pump(plan, pieces: stream.makePieces(), context: context)
        }
        switch plan.pacing {
        case .whole:
            write(plan.body, context: context)
            finish(plan, context: context)
        case .drip(let chunk, let interval):
            drip(plan, from: 0, chunk: chunk, interval: interval, context: context)
        }
    }

    /// Writes the next piece of a streamed body once the previous one reached the socket, so an endless body
    /// costs the server one piece of memory, and stops when the client goes away.
    private func pump(_ plan: ResponsePlan, pieces: @escaping () -> [UInt8]?, context: ChannelHandlerContext) {
        guard !isClosed else { return }
        guard let piece = pieces() else {
            if plan.isStreamChunked { write(Array("0\r\n\r\n".utf8), context: context) }
            return finish(plan, context: context)
        }
        var framed = plan.isStreamChunked ? Array("\(String(piece.count, radix: 16))\r\n".utf8) : []
        framed += piece
        if plan.isStreamChunked { framed += [13, 10] }
        let loop = context.eventLoop
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: framed))).assumeIsolated()
            .whenComplete { result in
                guard case .success = result else { return }
                loop.assumeIsolated().execute { self.pump(plan, pieces: pieces, context: context) }
            }
    }

    private func drip(_ plan: ResponsePlan, from offset: Int, chunk: Int, interval: Double,
                      context: ChannelHandlerContext) {
        guard !isClosed else { return }
        let end = min(plan.body.count, offset + chunk)
        write(Array(plan.body[offset..<end]), context: context)
        guard end < plan.body.count else { return finish(plan, context: context) }
        context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(interval * 1e9))) {
            self.drip(plan, from: end, chunk: chunk, interval: interval, context: context)
        }
    }

    private func finish(_ plan: ResponsePlan, context: ChannelHandlerContext) {
        isBusy = false
        switch plan.ending {
        case .keepAlive:
            respondToNext(context: context)
        case .close:
            context.close(promise: nil)
        case .reset:
            // SO_LINGER 0 makes close() send RST instead of FIN.
            if let provider = context.channel as? any SocketOptionProvider {
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            context.close(promise: nil)
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !bytes.isEmpty, !isClosed else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}
