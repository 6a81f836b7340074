import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import WebImageServerCore
import WebImageSync

/// The Hummingbird 2 adapter of the image service: routes (`/image`, `/info`, `/healthz`, `/metrics`), an access log,
/// Prometheus metrics, bounded connections (how many, each request's time and body size, the output buffered for
/// a client that does not read) and a graceful shutdown (SIGTERM and SIGINT stop accepting connections, let the
/// requests in flight finish within `shutdownGrace`, then cancel the origin transfers still running, and return).
///
/// ```swift
/// let service = try ImageService(configuration: configuration)
/// let server = ImageServer(service: service, host: "0.0.0.0", port: 8080)
/// try await server.run()
/// ```
///
/// Embedding in an existing Hummingbird application: `ImageServer.addRoutes(to: router, service: service)`.
///
/// - Important: Thread-safe; `run()` once per value.
public struct ImageServer: Sendable {
    /// The service answering `/image`.
    public let service: ImageService
    /// The address to bind. Default `0.0.0.0`.
    public let host: String
    /// The port to bind; 0 picks a free one (reported to `onServerRunning`). Default 8080.
    public let port: Int
    /// Logger of the access log and the server. Default label `webimage.server`.
    public let logger: Logger
    /// Seconds a client connection may stay without a complete request part before it is closed: between
    /// keep-alive requests, and while its request head trickles in (a slowloris sends a header byte now and
    /// then and would hold its socket and descriptor forever). A request whose response is being made is never
    /// cut. Default `defaultIdleTimeout` (30 s, nginx's `client_header_timeout` is 60 s); `nil` (or given as 0,
    /// negative, NaN or infinite): never.
    public let idleTimeout: Double?
    /// Seconds a request may take to arrive, from its first byte to the last of its body: a client trickling its
    /// head or its body (a slowloris) is answered 408 (or, if a response is already being written, closed) when it
    /// passes. The time to make the response is not counted. Default `defaultRequestTimeout` (30 s); `nil` (or 0,
    /// negative, NaN, infinite): never.
    public let requestTimeout: Double?
    /// The largest request body accepted, in bytes: every route is a GET, so a body is only ever a way to hold a
    /// connection. A declared `Content-Length` over it is answered 413 and closed; a chunked body growing past it is
    /// closed. Default `defaultMaxRequestBodySize` (8 KiB); 0 refuses any body.
    public let maxRequestBodySize: Int
    /// Client connections open at once; one past it is answered 503 (`Retry-After: 1`) and closed at once, never
    /// queued. Default `defaultMaxConnections` (1,024).
    public let maxConnections: Int
    /// Seconds the graceful shutdown lets requests in flight finish; at its end the origin transfers still running
    /// (and the requests waiting for one) are cancelled and answered 503, and 2 s later whatever is left (a client
    /// that never reads) is cancelled. Default `defaultShutdownGrace` (25 s: under the 30 s most supervisors wait
    /// before SIGKILL).
    public let shutdownGrace: Double

    /// The default `idleTimeout`: 30 s.
    public static let defaultIdleTimeout = 30.0
    /// The default `requestTimeout`: 30 s.
    public static let defaultRequestTimeout = 30.0
    /// The default `maxRequestBodySize`: 8 KiB.
    public static let defaultMaxRequestBodySize = 8 << 10
    /// The default `maxConnections`: 1,024.
    public static let defaultMaxConnections = 1024
    /// The default `shutdownGrace`: 25 s.
    public static let defaultShutdownGrace = 25.0
    /// Bytes of a response body handed to the connection at a time: a client that does not read holds at most
    /// about this much (plus the channel's 64 KiB high-water mark) of its own, never a copy of the whole image.
    static let responseChunkSize = 64 << 10

    /// The Prometheus registry every `ImageServer` in the process reports to; swift-metrics is bootstrapped
    /// with it on first use (a process has one metrics system).
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// Makes a server for `service` on `host`:`port`, closing connections idle for `idleTimeout` seconds, with the
    /// given bounds (each described at its property, defaults there).
    public init(service: ImageService, host: String = "0.0.0.0", port: Int = 8080,
                idleTimeout: Double? = ImageServer.defaultIdleTimeout,
                requestTimeout: Double? = ImageServer.defaultRequestTimeout,
                maxRequestBodySize: Int = ImageServer.defaultMaxRequestBodySize,
                maxConnections: Int = ImageServer.defaultMaxConnections,
                shutdownGrace: Double = ImageServer.defaultShutdownGrace,
                logger: Logger = Logger(label: "webimage.server")) {
        _ = Self.registry
        self.service = service
        self.host = host
        self.port = port
        self.idleTimeout = idleTimeout.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.requestTimeout = requestTimeout.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.maxRequestBodySize = max(0, maxRequestBodySize)
        self.maxConnections = max(1, maxConnections)
        self.shutdownGrace = shutdownGrace.isFinite ? min(max(0, shutdownGrace), 86_400) : Self.defaultShutdownGrace
        self.logger = logger
    }

    /// Adds `GET /image`, `GET /info`, `GET /healthz`, `GET /metrics` and thumbor's URLs (`GET /unsafe/…`,
    /// `GET /SIGNATURE/…`, on every other path) to `router`, with the access log.
    ///
    /// - Important: Only the routes: the connection limit, the request deadline and body limit, and the wait for
    ///   a slow reader between response chunks come with `ImageServer`'s own server (`makeServiceGroup`); an
    ///   application embedding these routes bounds its connections itself.
    public static func addRoutes<Context: RequestContext>(to router: Router<Context>, service: ImageService) {
        _ = registry
        router.add(middleware: AccessLogMiddleware())
        router.get("/image") { request, context -> Response in
            let response = await service.handle(ImageServiceRequest(
                query: request.uri.query ?? "", accept: request.headers[.accept],
                ifNoneMatch: request.headers[.ifNoneMatch]))
            // Bounded output per connection needs the channel: `ImageServer`'s own router has it; a router of
            // another context writes the shared bytes without waiting for the connection.
            return Response(response, channel: (context as? ImageRequestContext)?.channel)
        }
        // The info report (JSON) of a source: signed, policed and cached as images are.
        router.get("/info") { request, context -> Response in
            let response = await service.handleInfo(ImageServiceRequest(
                query: request.uri.query ?? "", ifNoneMatch: request.headers[.ifNoneMatch]))
            return Response(response, channel: (context as? ImageRequestContext)?.channel)
        }
        // Thumbor's grammar, on every other path: `/unsafe/…` and `/SIGNATURE/…` (the signature is the first
        // segment, so these never shadow the routes above). The raw path, still percent-encoded: a signature
        // covers it as sent.
        router.get("**") { request, context -> Response in
            let response = await service.handle(thumbor: ThumborServiceRequest(
                path: request.uri.path, accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch]))
            return Response(response, channel: (context as? ImageRequestContext)?.channel)
        }
        // 200 "ok: …" while uncached work can start; 503 "saturated: …" (with Retry-After) while every pipeline is
        // busy, or every origin transfer is busy and as many requests wait for one: a balancer stops sending new
        // work here until it clears. The counts follow on the same line.
        router.get("/healthz") { _, _ -> Response in
            let health = service.health
            var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
            if health.isSaturated { headers[.retryAfter] = String(service.configuration.retryAfterSeconds) }
            return Response(status: health.isSaturated ? .serviceUnavailable : .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "\(health)\n")))
        }
        router.get("/metrics") { _, _ -> Response in
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// Runs the server until SIGTERM or SIGINT (or the calling task is cancelled), then drains the requests in
    /// flight and returns.
    ///
    /// - Parameter onServerRunning: called once the socket is bound, with its port.
    public func run(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await makeServiceGroup(onServerRunning: onServerRunning).run()
    }

    /// `seconds` (finite, positive) as a NIO time amount, at most a year (`--idle-timeout 1e300` must not trap
    /// converting to nanoseconds).
    static func timeAmount(seconds: Double) -> TimeAmount {
        .nanoseconds(Int64((min(seconds, 365 * 86_400) * 1e9).rounded()))
    }

    /// The service group `run()` runs: the Hummingbird application, shut down gracefully on SIGTERM and SIGINT
    /// or by `triggerGracefulShutdown()` (which lets the requests in flight finish for `shutdownGrace` seconds,
    /// then cancels the origin transfers, then, 2 s later, the rest).
    public func makeServiceGroup(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> ServiceGroup {
        let router = Router(context: ImageRequestContext.self)
        Self.addRoutes(to: router, service: service)
        let idle = idleTimeout.map(Self.timeAmount(seconds:))
        let limiter = ConnectionLimiter(limit: maxConnections)
        let requestTimeout = self.requestTimeout.map(Self.timeAmount(seconds:))
        let maxBody = maxRequestBodySize
        let logger = self.logger
        let server = HTTPServerBuilder { responder in
            BoundedHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)),
                                limiter: limiter, requestTimeout: requestTimeout, maxRequestBodySize: maxBody, logger: logger)
        }
        let app = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "webimage-server",
                                                    backlog: 1024),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        let grace = Duration.milliseconds(Int64((shutdownGrace * 1000).rounded()))
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: DrainingService(base: app, service: service, grace: grace, logger: logger))],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = grace + .seconds(2)
        return ServiceGroup(configuration: configuration)
    }
}

extension Response {
    /// The Hummingbird response for a service response (headers, status, body; `Content-Length` from the body),
    /// its body written as `channel` takes it when given.
    init(_ response: ImageServiceResponse, channel: (any Channel)?) {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        if let tier = response.tier { fields.append(HTTPField(name: .xWebImageTier, value: tier.rawValue)) }
        self.init(status: HTTPResponse.Status(code: response.status), headers: fields, body: ResponseBody(sharing: response.body, owner: response.bodyOwner, channel: channel))
    }
}

extension ResponseBody {
    /// A body written from `data` itself (the result cache's bytes, shared by every response of that result), a
    /// chunk of `ImageServer.responseChunkSize` at a time, each once `channel` takes more bytes: a client that does
    /// not read holds one chunk and the channel's buffer, not its own copy of the image (a copy per response let 40
    /// clients that never read a 41 MiB result hold 1.6 GiB until their idle timeout).
    /// `owner` (`ImageServiceResponse.bodyOwner`) is held until the last byte is written.
    init(sharing data: Data, owner: (any AnyObject & Sendable)?, channel: (any Channel)?) {
        let chunk = ImageServer.responseChunkSize
        guard data.count > chunk else {
            self.init(byteBuffer: ByteBuffer(bytes: data))
            return
        }
        self.init(contentLength: data.count) { writer in
            var offset = data.startIndex
            while offset < data.endIndex {
                if let channel { try await OutputBackpressureHandler.waitUntilWritable(channel) }
                let end = data.index(offset, offsetBy: chunk, limitedBy: data.endIndex) ?? data.endIndex
                try await writer.write(ByteBuffer(bytes: data[offset..<end]))
                offset = end
            }
            try await writer.finish(nil)
            withExtendedLifetime(owner) {}
        }
    }
}

/// The application, with the end of the shutdown's grace: once a graceful shutdown begins, `grace` later the
/// service's origin transfers (and the waits for one) are cancelled, so that the requests still in flight are
/// answered (503) and the drain ends, however slow their origins.
///
/// - Important: Thread-safe; `run()` once.
struct DrainingService<Base: Service>: Service {
    let base: Base
    let service: ImageService
    let grace: Duration
    let logger: Logger

    func run() async throws {
        let timer = GraceTimer()
        defer { timer.cancel() }
        let (service, grace, logger) = (self.service, self.grace, self.logger)
        try await withGracefulShutdownHandler {
            try await base.run()
        } onGracefulShutdown: {
            timer.start {
                do { try await Task.sleep(for: grace) } catch { return }
                let health = service.health
                if health.activeTransfers + health.waitingTransfers > 0 {
                    logger.notice("shutdown grace over: cancelling origin transfers",
                                  metadata: ["active": "\(health.activeTransfers)", "waiting": "\(health.waitingTransfers)"])
                }
                service.cancelOriginTransfers()
            }
        }
    }
}

/// The task that ends the grace, cancelled when the application returns first.
///
/// - Important: Thread-safe.
final class GraceTimer: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let isCancelled = Mutex(false)

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { task in
            guard task == nil, !isCancelled.withLock({ $0 }) else { return }
            task = Task { await body() }
        }
    }

    func cancel() {
        isCancelled.withLock { $0 = true }
        task.withLock { $0 }?.cancel()
    }
}

extension HTTPField.Name {
    /// `X-WebImage-Tier`: where an image response came from (`result_memory`, `result_disk`, `original_disk`,
    /// `origin`, `coalesced`).
    static let xWebImageTier = HTTPField.Name("X-WebImage-Tier")!
}

/// Logs one line per request through swift-log: method, path, status, milliseconds.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context: context, status: response.status.code, start: start,
                tier: response.headers[.xWebImageTier])
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log(request, context: context, status: status, start: start, tier: nil)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant, tier: String?) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var metadata: Logger.Metadata = ["method": "\(request.method.rawValue)", "path": "\(request.uri.path)",
                                         "status": "\(status)", "ms": "\(String(format: "%.1f", ms))"]
        if let tier { metadata["tier"] = "\(tier)" }
        context.logger.info("request", metadata: metadata)
    }
}
