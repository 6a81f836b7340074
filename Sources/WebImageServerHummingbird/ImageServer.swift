import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import WebImageServerCore

/// The Hummingbird 2 adapter of the image service: routes (`/image`, `/healthz`, `/metrics`), an access log,
/// Prometheus metrics and a graceful shutdown (SIGTERM and SIGINT stop accepting connections, let the
/// requests in flight finish, then return).
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

    /// The default `idleTimeout`: 30 s.
    public static let defaultIdleTimeout = 30.0

    /// The Prometheus registry every `ImageServer` in the process reports to; swift-metrics is bootstrapped
    /// with it on first use (a process has one metrics system).
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// Makes a server for `service` on `host`:`port`, closing connections idle for `idleTimeout` seconds.
    public init(service: ImageService, host: String = "0.0.0.0", port: Int = 8080,
                idleTimeout: Double? = ImageServer.defaultIdleTimeout, logger: Logger = Logger(label: "webimage.server")) {
        _ = Self.registry
        self.service = service
        self.host = host
        self.port = port
        self.idleTimeout = idleTimeout.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        self.logger = logger
    }

    /// Adds `GET /image`, `GET /healthz` and `GET /metrics` to `router`, with the access log.
    public static func addRoutes<Context: RequestContext>(to router: Router<Context>, service: ImageService) {
        _ = registry
        router.add(middleware: AccessLogMiddleware())
        router.get("/image") { request, _ -> Response in
            let response = await service.handle(ImageServiceRequest(
                query: request.uri.query ?? "", accept: request.headers[.accept],
                ifNoneMatch: request.headers[.ifNoneMatch]))
            return Response(response)
        }
        router.get("/healthz") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n")))
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

    /// The service group `run()` runs: the Hummingbird application, shut down gracefully on SIGTERM and SIGINT
    /// or by `triggerGracefulShutdown()` (which lets the requests in flight finish).
    public func makeServiceGroup(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> ServiceGroup {
        let router = Router()
        Self.addRoutes(to: router, service: service)
        let idle = idleTimeout.map { TimeAmount.nanoseconds(Int64(($0 * 1e9).rounded())) }
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: idle)),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "webimage-server",
                                                    backlog: 1024),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        return ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }
}

extension Response {
    /// The Hummingbird response for a service response (headers, status, body; `Content-Length` from the body).
    init(_ response: ImageServiceResponse) {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        if let tier = response.tier { fields.append(HTTPField(name: .xWebImageTier, value: tier.rawValue)) }
        self.init(status: HTTPResponse.Status(code: response.status), headers: fields,
                  body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
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
