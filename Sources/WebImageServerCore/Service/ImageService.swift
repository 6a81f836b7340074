import Crypto
import Fetcher
import Foundation
import ImageCodec
import KVCache
import Logging
import WebImage
import WebImageSync

/// What the service needs from one HTTP request to `/image`.
///
/// - Important: A value type; thread-safe.
public struct ImageServiceRequest: Sendable {
    /// The raw query string (after `?`, without it), still percent-encoded.
    public var query: String
    /// The `Accept` header, if any (for `format=auto`).
    public var accept: String?
    /// The `If-None-Match` header, if any.
    public var ifNoneMatch: String?

    /// Makes a request.
    public init(query: String, accept: String? = nil, ifNoneMatch: String? = nil) {
        self.query = query
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
    }
}

/// The service's answer, ready for any HTTP framework to write.
///
/// - Important: A value type; thread-safe.
public struct ImageServiceResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Headers (`Content-Type`, `ETag`, `Cache-Control`, `Vary`, `Retry-After`, …); `Content-Length` is the
    /// body's size and left to the framework.
    public var headers: [(name: String, value: String)]
    /// The body: the image, a plain-text error, or empty (304).
    public var body: Data
    /// Where the image came from (`nil` for errors and 304s), for the access log.
    public var tier: ResultTier?
    /// The error answered, if any.
    public var error: ImageServiceError?
    /// What keeps `body` shared with other responses of the same result while this one is written (a result read
    /// from the disk tier); `nil` for most responses. An HTTP adapter holds it for as long as it writes `body`.
    public var bodyOwner: (any AnyObject & Sendable)?

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Counts of the work an `ImageService` did, for tests and diagnostics.
public struct ImageServiceStatistics: Sendable, Hashable {
    /// Transfers to origins (successful or not).
    public var originFetches = 0
    /// Source decodes.
    public var decodes = 0
    /// Result encodes.
    public var encodes = 0
    /// Requests answered 503 because the service was saturated.
    public var saturated = 0
    /// Renders stopped at `renderTimeout` (each answered 503), counted when they stopped.
    public var renderTimeouts = 0
}

/// The image service, independent of any HTTP framework: `/image` query → validated options → signature
/// check → result cache → (coalesced, concurrency-limited) pipeline: source bytes through an `ImageManager`
/// (public addresses only, no `file` URLs, bounded response) → downsampled decode within the manager's
/// `DecodeBudget` → orientation, resize, crop, blur → encode → result cache → response with `ETag`,
/// `Cache-Control` and `Vary`.
///
/// ```swift
/// let service = try ImageService(configuration: configuration)
/// let response = await service.handle(ImageServiceRequest(query: "url=…&w=400&h=300&sig=…", accept: accept))
/// ```
///
/// - Important: Thread-safe; `handle` may be called from many tasks at once. CPU work (decode, resize,
///   encode) runs on a Dispatch queue, not on the caller's executor.
public final class ImageService: Sendable {
    /// The settings the service was made with.
    public let configuration: ImageServiceConfiguration
    /// The manager that loads source bytes (its cache holds the originals; its `decodeBudget` bounds decodes).
    public let manager: ImageManager
    let signers: [URLSigner]
    let thumborSigner: ThumborSigner
    let resolution: RequestResolution
    let results: ResultCache
    let resultCoalescer = Coalescer<(result: ImageResult, tier: ResultTier)>()
    let sourceCoalescer = Coalescer<(data: Data, source: ImageSource)>()
    let servedBodies = ServedBodies()
    let diskReadCoalescer = Coalescer<ServedBodies.Body?>()
    let running = Mutex(0)
    let gate: OriginGate
    let counts = Mutex(ImageServiceStatistics())
    let metrics = ServiceMetrics()
    let renderQueue = DispatchQueue(label: "webimage.server.render", attributes: .concurrent)
    /// Fires render deadlines (`renderTimeout`); serial, so never starved by the renders themselves.
    let deadlineQueue = DispatchQueue(label: "webimage.server.render-deadline")
    static let logger = Logger(label: "webimage.server")

    /// Opens the caches under `configuration.cacheDirectory` (made if missing, with its parents) and makes the
    /// manager.
    ///
    /// - Throws: `ImageServiceError.internalFailure` when a cache folder cannot be opened, or when no signing key
    ///   (`signingKey` or `thumborKeys`) nor `allowsUnsigned` is configured; `.badSigningKey` for a key under 16 bytes.
    public init(configuration: ImageServiceConfiguration) throws(ImageServiceError) {
        guard !configuration.signingKeys.isEmpty || !configuration.thumborKeys.isEmpty || configuration.allowsUnsigned else {
            throw .internalFailure("a signing key is required unless unsigned requests are allowed")
        }
        Self.registerCodecModules()
        self.configuration = configuration
        var signers: [URLSigner] = []
        for key in configuration.signingKeys {
            do { signers.append(try URLSigner(key: key)) } catch { throw .badSigningKey(error) }
        }
        self.signers = signers
        resolution = RequestResolution(presets: configuration.presets, presetsOnly: configuration.presetsOnly,
                                       allowedSizes: configuration.allowedSizes)
        do { thumborSigner = try ThumborSigner(keys: configuration.thumborKeys) } catch { throw .badSigningKey(error) }
        let transfers = max(1, configuration.maxConcurrentTransfers)
        // One exact allowed host: every transfer is to it, so a share of the slots per host would only throttle it.
        let singleHost = configuration.allowedHosts.count == 1 && !configuration.allowedHosts[0].hasPrefix("*.")
        gate = OriginGate(totalLimit: transfers,
                          perHostLimit: configuration.maxConcurrentTransfersPerHost ?? (singleHost ? transfers : max(1, transfers / 4)),
                          perHostQueueLimit: configuration.maxQueuedTransfersPerHost ?? max(1, configuration.maxConcurrency / 4),
                          // A tenth of the timeout, 50 ms to 1 s: a transfer granted with less left is not started.
                          minimumTransferTime: min(.seconds(1), max(.milliseconds(50), Self.sourceDeadline(configuration.sourceTimeout) / 10)))
        let base = URL(fileURLWithPath: configuration.cacheDirectory)
        do {
            try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
            var limits = ImageCacheLimits.default
            limits.diskCostLimit = configuration.originalDiskCostLimit
            let originals = try ImageCache(path: base.appendingPathComponent("originals").path, limits: limits,
                                           sharedTier: configuration.sharedTier)
            results = try ResultCache(path: base.appendingPathComponent("results").path,
                                      memoryCostLimit: configuration.resultMemoryCostLimit,
                                      diskCostLimit: configuration.resultDiskCostLimit)
            manager = ImageManager(cache: originals,
                                   queue: FetchQueue(maxConcurrentTransfers: transfers))
        } catch {
            throw .internalFailure("cannot open the caches under \(configuration.cacheDirectory): \(error)")
        }
        manager.sourcePolicy = SourcePolicy(isPublicOnly: true, allowedNetworks: configuration.allowedNetworks,
                                            allowedHosts: configuration.allowedHosts)
        manager.allowsFileURLs = false
        manager.maximumResponseSize = configuration.maximumSourceSize
        manager.timeout = configuration.sourceTimeout
        manager.connectTimeout = min(manager.connectTimeout, configuration.sourceTimeout)
    }

    /// Counts of the work done so far.
    public var statistics: ImageServiceStatistics { counts.withLock { $0 } }

    /// Pipelines running now (at most `maxConcurrency`).
    public var runningCount: Int { running.withLock { $0 } }

    /// Answers one `/image` request. Never throws: every failure is an error response (see
    /// `ImageServiceError`), and each is counted in the metrics and logged with its cause (debug; an unreachable
    /// origin at info, with the reason the client is not told).
    public func handle(_ request: ImageServiceRequest) async -> ImageServiceResponse {
        await measured { start in try await respond(to: request, arrival: start) }
    }

    /// Runs `body` (given the request's arrival), turning its failure into an error response, logging and counting
    /// it in the metrics.
    func measured(_ body: (ContinuousClock.Instant) async throws -> ImageServiceResponse) async -> ImageServiceResponse {
        let start = ContinuousClock.now
        var response: ImageServiceResponse
        do {
            response = try await body(start)
        } catch let error as ImageServiceError {
            response = errorResponse(error)
        } catch {
            response = errorResponse(.internalFailure("\(error)"))
        }
        if let error = response.error {
            if case .originUnreachable(let reason) = error {
                Self.logger.info("origin unreachable", metadata: ["reason": "\(reason)"])
            } else {
                Self.logger.debug("request failed", metadata: ["status": "\(response.status)", "error": "\(error)"])
            }
        }
        let elapsed = ContinuousClock.now - start
        metrics.request(status: response.status,
                        nanoseconds: elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        return response
    }

    private func respond(to request: ImageServiceRequest, arrival: ContinuousClock.Instant) async throws -> ImageServiceResponse {
        let pairs = try QueryString.parse(Substring(request.query))
        try checkSignature(pairs)
        var options = try resolution.options(for: pairs)
        // No `q` in the request or its presets: the server's default (a number, or automatic).
        if !resolution.setsQuality(pairs) {
            options.quality = configuration.defaultQuality
            options.automaticQuality = configuration.defaultAutomaticQuality
        }
        return try await respond(options: options, accept: request.accept, ifNoneMatch: request.ifNoneMatch, arrival: arrival)
    }

    /// The response for checked options (`/image` and thumbor URLs alike).
    func respond(options: ImageRequestOptions, accept: String?, ifNoneMatch: String?,
                 arrival: ContinuousClock.Instant) async throws -> ImageServiceResponse {
        try checkSource(options.source)
        for url in options.watermarkURLs { try checkSource(url) }
        let candidates = FormatNegotiation.candidates(accepted: FormatNegotiation.acceptedFormats(accept),
                                                      prefersJXL: options.prefersJXL || configuration.prefersJXL)
        try checkEncodable(options.format)
        // `auto` with the candidates it chooses among (with the source, they decide the format): "auto-avif-webp".
        let formatToken = options.format == .auto ? (["auto"] + candidates.map(\.rawValue)).joined(separator: "-")
            : options.format.rawValue
        // The encode effort changes the bytes too, and results outlive a restart with another `--encode-effort`
        // (the default's keys are unchanged: "@effort" only for the others).
        let effortToken = configuration.encodeEffort == .balanced ? "" : "@" + configuration.encodeEffort.rawValue
        let key = ResultCache.key(source: manager.cacheKey(for: options.source), processing: options.canonicalProcessing,
                                  format: formatToken + effortToken)

        let result: ImageResult
        let tier: ResultTier
        var owner: ServedBodies.Body?
        if configuration.cachesResults, let hit = results.memory.object(forKey: key) {
            (result, tier) = (hit, .resultMemory)
        } else if configuration.cachesResults, let shared = try await sharedDiskResult(forKey: key) {
            (result, tier, owner) = (shared.result, .resultDisk, shared)
        } else {
            let (made, isLeader) = try await resultCoalescer.value(forKey: key) { [self] in
                try await makeResult(options: options, candidates: candidates, key: key,
                                     deadline: arrival + Self.sourceDeadline(configuration.sourceTimeout))
            }
            (result, tier) = (made.result, isLeader ? made.tier : .coalesced)
        }
        // `.origin` is a miss of every cache: counting it in `webimage_cache_hits_total` made any hit ratio
        // computed from the metric read 100 % (MetricsReviewTests).
        if tier != .origin { metrics.hit(tier) }
        var response = imageResponse(result, tier: tier, varies: options.format == .auto, ifNoneMatch: ifNoneMatch)
        response.bodyOwner = owner
        return response
    }

    /// The time a source may take from the request's arrival: `sourceTimeout`, or (0, negative, NaN, infinite)
    /// practically none (a billion seconds), as libcurl takes a timeout of 0.
    static func sourceDeadline(_ seconds: Double) -> Duration {
        seconds.isFinite && seconds > 0 ? .seconds(min(seconds, 1e9)) : .seconds(1e9)
    }

    /// The result on disk for `key`, shared: the bytes a response of it is still writing, else one read (joined by
    /// the concurrent requests of the key) registered in `servedBodies` for those that come while it is written.
    func sharedDiskResult(forKey key: String) async throws -> ServedBodies.Body? {
        if let shared = servedBodies.body(forKey: key) { return shared }
        return try await diskReadCoalescer.value(forKey: key) { [self] () throws -> ServedBodies.Body? in
            if let shared = servedBodies.body(forKey: key) { return shared }
            return try diskResult(forKey: key).map { servedBodies.register($0, forKey: key) }
        }.value
    }

    private func diskResult(forKey key: String) throws -> ImageResult? {
        do { return try results.diskResult(forKey: key) } catch {
            Self.logger.warning("result cache read failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    // MARK: Checks

    func checkSignature(_ pairs: [(name: String, value: String)]) throws(ImageServiceError) {
        let given = pairs.first { $0.name == "sig" }?.value
        guard let given else {
            if configuration.allowsUnsigned { return }
            throw .badSignature
        }
        // Every key is tried (no early exit), so the time taken does not tell which key matched.
        var valid = false
        for signer in signers {
            let matches = signer.isValid(given, for: pairs)
            valid = valid || matches
        }
        guard valid else { throw .badSignature }
    }

    /// An explicit `format=avif` or `format=jxl` this process cannot encode (a libavif without an AV1 encoder) is a
    /// bad option, not a 500 after the source is fetched.
    private func checkEncodable(_ format: RequestedFormat) throws(ImageServiceError) {
        let named: ImageFormat
        switch format {
        case .avif: named = .avif
        case .jxl: named = .jpegXL
        default: return
        }
        guard ImageCodecRegistry.shared.canEncode(named) else {
            throw .badOptions("format: \(format.rawValue) output is not available on this server")
        }
    }

    func checkSource(_ url: URL) throws(ImageServiceError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .sourceRefused("only http and https sources are loaded (got \(url.scheme ?? "no scheme"))")
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else { throw .badOptions("url: no host") }
        guard !configuration.allowedHosts.isEmpty else { return }
        let allowed = configuration.allowedHosts.contains { entry in
            let entry = entry.lowercased()
            if entry.hasPrefix("*.") { return host.hasSuffix(entry.dropFirst()) }
            return host == entry
        }
        guard allowed else { throw .sourceRefused("host \(host) is not on the allow-list") }
    }

    // MARK: Responses

    func imageResponse(_ result: ImageResult, tier: ResultTier, varies: Bool, ifNoneMatch: String?) -> ImageServiceResponse {
        var headers: [(name: String, value: String)] = [
            ("ETag", result.etag),
            ("Cache-Control", "public, max-age=\(configuration.cacheMaxAge)"),
        ]
        if varies { headers.append(("Vary", "Accept")) }
        if let ifNoneMatch, Self.matches(ifNoneMatch, etag: result.etag) {
            return ImageServiceResponse(status: 304, headers: headers, body: Data(), tier: tier)
        }
        headers.insert(("Content-Type", result.contentType), at: 0)
        return ImageServiceResponse(status: 200, headers: headers, body: result.body, tier: tier)
    }

    /// Whether an `If-None-Match` value matches `etag` (weak comparison, as RFC 9110 asks for this header).
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        let strip = { (tag: Substring) -> Substring in tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || strip(Substring(tag)) == strip(Substring(etag))
        }
    }

    func errorResponse(_ error: ImageServiceError, status: Int? = nil) -> ImageServiceResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "text/plain; charset=utf-8"),
                                                        ("Cache-Control", "no-store")]
        if case .saturated(let seconds) = error { headers.append(("Retry-After", String(seconds))) }
        return ImageServiceResponse(status: status ?? error.httpStatus, headers: headers, body: Data("\(error)\n".utf8),
                                    error: error)
    }
}
