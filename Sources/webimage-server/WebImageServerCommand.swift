import ArgumentParser
import Fetcher
import Foundation
import ImageCodec
import Logging
import WebImageServerCore
import WebImageMemcached
import WebImageServerHummingbird

/// `webimage-server`: the image service over HTTP (Hummingbird 2). See the README section "webimage-server".
@main
struct WebImageServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage-server",
        abstract: "Serve resized, re-encoded, cached images from remote sources (GET /image?url=…&w=&h=…).")

    @Option(help: "Port to listen on (0: any free port, printed at start).")
    var port = 8080

    @Option(help: "Address to bind.")
    var host = "0.0.0.0"

    @Option(help: "Cache folder (originals/ and results/ inside).")
    var cache: String

    @Option(help: "HMAC-SHA256 key for sig=, in hex digits only: at least 16 bytes (32 digits); 32 random bytes recommended (openssl rand -hex 32). Repeat it to accept several keys at once (rotation).")
    var key: [String] = []

    @Option(help: "A named option set, NAME=OPTIONS (thumb=w=200&h=200&fit=cover), used as preset=NAME. Repeatable.")
    var preset: [String] = []

    @Option(help: "A file of presets, one NAME=OPTIONS per line (# starts a comment).")
    var presetsFile: String?

    @Flag(help: "Serve presets only: a request gives url, preset and sig, nothing else.")
    var presetsOnly = false

    @Option(help: "The only w/h a request may give itself, e.g. 400x300,800x0 (0: that side not given). Default: any.")
    var allowedSizes: String?

    @Option(name: .customLong("thumbor-key"),
            help: "A key of thumbor-style signed URLs (/SIGNATURE/300x200/…), as thumbor's SECURITY_KEY: at least 16 bytes. Repeat it to accept several (any one matches), e.g. while keys rotate.")
    var thumborKeys: [String] = []

    @Flag(help: "Serve requests without sig= and thumbor URLs under /unsafe/ (a signature that is given is still checked).")
    var allowUnsigned = false

    @Option(name: .customLong("allow-host"), parsing: .upToNextOption,
            help: "Only load sources from these hosts (exact; *.example.com for subdomains). Default: any public host.")
    var allowHosts: [String] = []

    @Option(name: .customLong("allow-network"), parsing: .upToNextOption,
            help: "Networks (CIDR) sources may be on besides public addresses, e.g. 10.0.0.0/8. Default: none.")
    var allowNetworks: [String] = []

    @Option(help: "Results being made at the same time; past it, 503 with Retry-After.")
    var maxConcurrency = 64

    @Option(help: "Quality of requests without q=: 1…100, or auto, auto:low, auto:high, auto:SCORE (SSIMULACRA2 target; auto is 70), each optionally with :predicted (unscored, one encode).")
    var defaultQuality = "80"

    @Option(help: "How hard lossy output is worked for fewer bytes: fast (WebP method 2, AVIF speed 9, JPEG XL effort 4), balanced, or smallest (progressive JPEG, WebP method 6 with sharp YUV, AVIF speed 6, JPEG XL effort 6: 3-7 % fewer bytes, 2-6x the encode time).")
    var encodeEffort = "balanced"

    @Option(help: "Cache-Control max-age of image responses, in seconds.")
    var maxAge = 86_400

    @Option(help: "Seconds a client connection may stay idle, or trickle in its request head, before it is closed (0: never).")
    var idleTimeout = ImageServer.defaultIdleTimeout

    @Option(help: "Seconds a request may take to arrive, head and body, from its first byte (0: never).")
    var requestTimeout = ImageServer.defaultRequestTimeout

    @Option(help: "Largest request body accepted, in bytes (every route is a GET; 0 refuses any body).")
    var maxRequestBody = ImageServer.defaultMaxRequestBodySize

    @Option(help: "Client connections open at once; one past it is answered 503 and closed.")
    var maxConnections = ImageServer.defaultMaxConnections

    @Option(help: "Seconds a source may take, from the request's arrival: the wait for a transfer slot and the transfer.")
    var sourceTimeout = 10.0

    @Option(help: "Seconds a render (decode, resize, encode) may take once its source is there; past it, 503 (0: no limit).")
    var renderTimeout = 10.0

    @Flag(help: "format=auto tries JPEG XL first (before AVIF and WebP) for clients that list image/jxl, as prefer=jxl does.")
    var preferJxl = false

    @Option(help: "Origin transfers at the same time, in all.")
    var maxTransfers = 16

    @Option(help: "Origin transfers to one host at the same time (default: a quarter of --max-transfers, at least 1; all of them with a single --allow-host).")
    var maxTransfersPerHost: Int?

    @Option(help: "Seconds SIGTERM lets requests in flight finish; then origin transfers are cancelled (503) and the server stops about 2 s later.")
    var shutdownGrace = ImageServer.defaultShutdownGrace

    @Option(help: "Log level: trace, debug, info (the access log), notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: "A memcached pool shared by a fleet for the original bytes: HOST:PORT[,HOST:PORT…]. Default: none.")
    var memcached: String?

    @Flag(help: "Do not cache processed results (every request runs the pipeline; for benchmarks).")
    var noResultCache = false

    func validate() throws {
        guard !key.isEmpty || !thumborKeys.isEmpty || allowUnsigned else {
            throw ValidationError("give --key HEX, --thumbor-key KEY or --allow-unsigned")
        }
        do { _ = try ThumborSigner(keys: thumborKeys.map { Array($0.utf8) }) } catch {
            throw ValidationError("--thumbor-key: \(error)")
        }
        for key in key {
            do { _ = try URLSigner.keyBytes(hex: key) } catch { throw ValidationError("--key: \(error)") }
        }
        _ = try readPresets()
        guard !presetsOnly || !preset.isEmpty || presetsFile != nil else {
            throw ValidationError("--presets-only needs at least one --preset or --presets-file")
        }
        if let allowedSizes {
            do { _ = try AllowedSize.list(allowedSizes) } catch { throw ValidationError("--allowed-sizes: \(error.detail)") }
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a level") }
        guard maxConcurrency > 0 else { throw ValidationError("--max-concurrency must be at least 1") }
        guard idleTimeout.isFinite, idleTimeout >= 0 else { throw ValidationError("--idle-timeout must be 0 or more seconds") }
        guard requestTimeout.isFinite, requestTimeout >= 0 else { throw ValidationError("--request-timeout must be 0 or more seconds") }
        guard maxRequestBody >= 0 else { throw ValidationError("--max-request-body must be 0 or more bytes") }
        guard maxConnections > 0 else { throw ValidationError("--max-connections must be at least 1") }
        guard sourceTimeout.isFinite, sourceTimeout > 0 else { throw ValidationError("--source-timeout must be more than 0 seconds") }
        guard renderTimeout.isFinite, renderTimeout >= 0 else { throw ValidationError("--render-timeout must be 0 or more seconds") }
        guard maxTransfers > 0 else { throw ValidationError("--max-transfers must be at least 1") }
        if let maxTransfersPerHost, maxTransfersPerHost < 1 { throw ValidationError("--max-transfers-per-host must be at least 1") }
        guard shutdownGrace.isFinite, shutdownGrace >= 0 else { throw ValidationError("--shutdown-grace must be 0 or more seconds") }
        for network in allowNetworks where IPNetwork(network) == nil {
            throw ValidationError("--allow-network \(network) is not a CIDR block")
        }
    }

    func run() async throws {
        // Logs (the access log among them) to stderr; stdout carries only the "listening" line.
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = ImageServiceConfiguration(cacheDirectory: cache)
        configuration.signingKeys = try key.map { hex in
            do { return try URLSigner.keyBytes(hex: hex) } catch { throw ValidationError("--key: \(error)") }
        }
        configuration.presets = try readPresets()
        configuration.presetsOnly = presetsOnly
        configuration.allowedSizes = try allowedSizes.map { text in
            do { return try AllowedSize.list(text) } catch { throw ValidationError("--allowed-sizes: \((error as? ImageServiceError)?.detail ?? "\(error)")") }
        } ?? []
        configuration.allowsUnsigned = allowUnsigned
        configuration.thumborKeys = thumborKeys.map { Array($0.utf8) }
        configuration.allowedHosts = allowHosts
        configuration.allowedNetworks = allowNetworks.compactMap(IPNetwork.init)
        configuration.maxConcurrency = maxConcurrency
        if defaultQuality.lowercased().hasPrefix("auto") {
            guard let target = QualityTarget(parameter: defaultQuality) else {
                throw ValidationError("--default-quality: expected 1…100, auto, auto:low, auto:high or auto:SCORE, optionally with :predicted")
            }
            configuration.defaultAutomaticQuality = target
        } else {
            guard let value = Int(defaultQuality), (1...100).contains(value) else {
                throw ValidationError("--default-quality: expected 1…100, auto, auto:low, auto:high or auto:SCORE, optionally with :predicted")
            }
            configuration.defaultQuality = value
        }
        guard let effort = EncodeEffort(rawValue: encodeEffort.lowercased()) else {
            throw ValidationError("--encode-effort: expected fast, balanced or smallest")
        }
        configuration.encodeEffort = effort
        configuration.cacheMaxAge = maxAge
        configuration.cachesResults = !noResultCache
        configuration.sourceTimeout = sourceTimeout
        configuration.renderTimeout = renderTimeout
        configuration.prefersJXL = preferJxl
        configuration.maxConcurrentTransfers = maxTransfers
        configuration.maxConcurrentTransfersPerHost = maxTransfersPerHost
        if let memcached {
            do {
                configuration.sharedTier = try MemcachedTier(servers: memcached.split(separator: ",").map(String.init))
            } catch {
                throw ValidationError("--memcached: \(error)")
            }
        }
        let service = try ImageService(configuration: configuration)
        Logger(label: "webimage.server").info("codec modules", metadata: ["modules": "\(ImageService.codecModules.joined(separator: ", "))"])
        let server = ImageServer(service: service, host: host, port: port, idleTimeout: idleTimeout > 0 ? idleTimeout : nil,
                                 requestTimeout: requestTimeout > 0 ? requestTimeout : nil, maxRequestBodySize: maxRequestBody,
                                 maxConnections: maxConnections, shutdownGrace: shutdownGrace)
        try await server.run { port in
            print("webimage-server listening on \(host):\(port)")
            fflush(nil) // every stream: `stdout` itself is a global Swift 6 cannot reference safely
        }
    }

    /// The presets of `--presets-file` (first) and `--preset` (after, so a flag replaces a file's preset of the same name).
    private func readPresets() throws -> [ImagePreset] {
        var presets: [ImagePreset] = []
        if let presetsFile {
            let contents: String
            do { contents = try String(contentsOfFile: presetsFile, encoding: .utf8) } catch {
                throw ValidationError("--presets-file \(presetsFile): \(error.localizedDescription)")
            }
            do { presets += try ImagePreset.presets(file: contents) } catch {
                throw ValidationError("--presets-file \(presetsFile): \(error.detail)")
            }
        }
        for definition in preset {
            do { presets.append(try ImagePreset(definition: definition)) } catch {
                throw ValidationError("--preset: \(error.detail)")
            }
        }
        return presets
    }

}
