import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) that serves fixed bodies by path: the demo's gallery.
///
/// `GET /path` answers 200 with the body and its content type, anything else 404 (or 405 for other methods).
/// Keep-alive is honoured, so the demo's transfers reuse connections as a real client would.
///
/// - Important: Thread-safe. The routes are fixed at start; one event-loop thread serves every connection.
final class GalleryServer: Sendable {
    /// A body and its `Content-Type`.
    struct Resource: Sendable {
        var body: Data
        var contentType: String
    }

    /// The port the server listens on.
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.group = group
        self.channel = channel
    }

    /// Starts serving `resources` (keyed by path, e.g. `/jpeg/640x480.jpg`) on 127.0.0.1.
    static func start(resources: [String: Resource]) throws -> GalleryServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(GalleryHandler(resources: resources))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
            guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            return GalleryServer(port: port, group: group, channel: channel)
        } catch {
            try? group.syncShutdownGracefully() // best effort: the start failure is what the caller needs
            throw error
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL? { URL(string: "http://127.0.0.1:\(port)\(path)") }

    /// Stops listening, closes connections and stops the event-loop thread.
    func shutdown() {
        // Errors here mean "already closed": nothing is left to release.
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Answers one connection's requests from the fixed resources. Confined to its channel's event loop.
private final class GalleryHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let resources: [String: GalleryServer.Resource]
    private var request: HTTPRequestHead?

    init(resources: [String: GalleryServer.Resource]) { self.resources = resources }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let status: HTTPResponseStatus
        let body: Data
        var headers = HTTPHeaders()
        if head.method != .GET && head.method != .HEAD {
            (status, body) = (.methodNotAllowed, Data("method not allowed\n".utf8))
            headers.add(name: "Content-Type", value: "text/plain")
        } else if let resource = resources[path] {
            (status, body) = (.ok, resource.body)
            headers.add(name: "Content-Type", value: resource.contentType)
            headers.add(name: "Cache-Control", value: "max-age=3600")
        } else {
            (status, body) = (.notFound, Data("not found: \(path)\n".utf8))
            headers.add(name: "Content-Type", value: "text/plain")
        }
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = head.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                      promise: nil)
        if head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
