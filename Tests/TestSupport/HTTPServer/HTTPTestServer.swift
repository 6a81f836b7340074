import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP/1.1 server for tests, on SwiftNIO, that serves bytes per path and misbehaves on demand.
///
///     let server = try HTTPTestServer.start()
///     defer { server.shutdown() }
///     server.route("/a.jpg", .bytes(data, contentType: "image/jpeg"))
///     server.route("/slow", .drip(data, chunk: 100, interval: 0.05))
///     server.route("/echo") { request in .status(200, body: request.header("Accept") ?? "") }
///     fetch(server.url("/a.jpg"))
///     XCTAssertEqual(server.requestCount(for: "/a.jpg"), 1)
///
/// Routes match the request path without its query string; an unknown path gets 404. Every request is
/// recorded (`requests(for:)`), counted per path, and every accepted TCP connection is counted
/// (`connectionCount`), so tests can check keep-alive reuse and coalescing.
///
/// - Important: Thread-safe: routes may be changed and counters read from any thread while it serves.
///   Call `shutdown()` when done (it waits until every connection is closed).
public final class HTTPTestServer: Sendable {
    /// One request as the server received it.
    public struct Request: Sendable {
        /// `GET`, `HEAD`, …
        public let method: String
        /// The request target as sent, with its query string.
        public let uri: String
        /// The path without the query string.
        public let path: String
        /// The headers, in order.
        public let headers: [(name: String, value: String)]

        /// The first value of a header (case-insensitive name), or nil.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Produces the response for a request.
    public typealias Handler = @Sendable (Request) -> HTTPTestResponse

    private struct State {
        var routes: [String: Handler] = [:]
        var requests: [String: [Request]] = [:]
        var totalRequests = 0
    }

    /// The TCP port the server listens on (127.0.0.1).
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state = Mutex(State())
    private let connections = Atomic<Int>(0)

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.group = group
        self.channel = channel
    }

    /// Starts a server on 127.0.0.1 on an ephemeral port (one event-loop thread).
    public static func start() throws -> HTTPTestServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = ServerBox()
        do {
            let channel = try ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    box.server?.connections.add(1, ordering: .relaxed)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                        try channel.pipeline.syncOperations.addHandler(HTTPTestConnectionHandler(box: box))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).wait()
            guard let port = channel.localAddress?.port else {
                throw ChannelError.unknownLocalAddress
            }
            let server = HTTPTestServer(port: port, group: group, channel: channel)
            box.server = server
            return server
        } catch {
            try? group.syncShutdownGracefully() // best effort: the start failure is what the caller needs
            throw error
        }
    }

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/` and may carry a query.
    public func url(_ path: String) -> URL {
        // The string is built from a number and a caller's path: only a malformed path fails.
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/invalid-test-path")
    }

    /// Serves `response` for `path` (replacing any previous route).
    public func route(_ path: String, _ response: HTTPTestResponse) {
        route(path) { _ in response }
    }

    /// Serves whatever `handler` returns for each request to `path` (runs on the server's event loop).
    public func route(_ path: String, _ handler: @escaping Handler) {
        state.withLock { $0.routes[path] = handler }
    }

    /// How many requests reached `path` (query ignored) so far.
    public func requestCount(for path: String) -> Int {
        state.withLock { $0.requests[path]?.count ?? 0 }
    }

    /// The requests that reached `path` (query ignored), oldest first.
    public func requests(for path: String) -> [Request] {
        state.withLock { $0.requests[path] ?? [] }
    }

    /// How many requests reached the server, on any path.
    public var totalRequestCount: Int { state.withLock { $0.totalRequests } }

    /// How many TCP connections the server has accepted.
    public var connectionCount: Int { connections.load(ordering: .relaxed) }

    /// Stops listening, closes every connection and stops the event-loop thread. Idempotent.
    public func shutdown() {
        // Errors here mean "already closed": nothing left to release.
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Records `request` and returns the handler for its path (nil: 404). Called on the event loop.
    func receive(_ request: Request) -> Handler? {
        state.withLock {
            $0.totalRequests += 1
            $0.requests[request.path, default: []].append(request)
            return $0.routes[request.path]
        }
    }

    /// A URL on 127.0.0.1 where nothing listens (connection refused): a port just bound and released.
    public static func refusedURL(_ path: String = "/") throws -> URL {
        let server = try start()
        let url = server.url(path)
        server.shutdown()
        return url
    }
}

/// Lets the child initializer reach the server, which exists only once the bind succeeded.
final class ServerBox: Sendable {
    private let slot = Mutex<HTTPTestServer?>(nil)
    var server: HTTPTestServer? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
