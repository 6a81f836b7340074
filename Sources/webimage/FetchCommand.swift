import ArgumentParser
import Foundation
import WebImage
import WebImageMemcached

/// `webimage fetch URL…`: loads images through `ImageManager` (memory → disk cache → network → decode),
/// optionally writes them, and summarises.
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images by URL through ImageManager and its cache, and optionally save them.",
        discussion: """
        Each URL goes through the whole pipeline: memory cache, disk cache (--cache, default the ImageCache \
        default path), network, decode. Prints one line per URL, in the order given, as soon as it and the \
        URLs before it are done, and a summary; exits 1 if any URL failed, with the reason (HTTP status, \
        decode error, …). Images are written (--out) as each completes and then let go, so a batch of any \
        length holds the memory cache (--memory-cache) plus the --concurrency images in flight. Plain file paths are accepted as file URLs. \
        WebImage logs warnings only; set WEBIMAGE_LOG_LEVEL=info (or debug) for more.

        Untrusted sources: every transfer is bounded by default (the library's defaults: at most \
        \(FetchRequest.defaultMaximumResponseSize) bytes after content decoding, 60 s per transfer and 15 s without progress, 10 s to connect, \
        10 redirects). --public-only refuses loopback, private, link-local, CGNAT, multicast and reserved \
        addresses (checked on the address connected, every redirect hop); --no-file-urls refuses file URLs and \
        paths. Each refusal is printed with its reason.

        Options for --options (comma-separated): \(FetchOptionName.all.map(\.name).joined(separator: ", ")).

        Examples:
          webimage fetch https://example.com/a.jpg https://example.com/b.webp --out img
          webimage fetch https://example.com/a.jpg --thumbnail 256 --format png --out t
          webimage fetch https://example.com/a.gif --options refresh,first-frame
          webimage fetch "$UNTRUSTED_URL" --public-only --no-file-urls --max-bytes 10000000
          webimage fetch https://example.com/a.jpg --memcached 10.0.0.5:11211,10.0.0.6:11211
        """
    )

    @Argument(help: "The URLs (http, https or file) to load.")
    var urls: [String]

    @Option(name: .long, help: "Folder to write the images into (created if missing). Nothing is written by default.")
    var out: String?

    @Option(name: .long, help: "Decode a thumbnail whose longest side is at most this many pixels.")
    var thumbnail: Int?

    @Option(name: .long, help: "Re-encode written images as png, jpeg, webp or gif (default: keep the original bytes).")
    var format: String?

    @Option(name: .long, help: "Disk cache folder (default: \(ImageCache.defaultPath())).")
    var cache: String?

    @Option(name: .long, help: "A shared cache tier after the disk: memcached servers HOST:PORT[,HOST:PORT…] (trusted network only: no TLS).")
    var memcached: String?

    @Option(name: .customLong("memory-cache"),
            help: "Memory cache limit for decoded images, in bytes (default: the library's, 15 % of memory, at most 768 MiB).")
    var memoryCache: Int?

    @Option(name: .long, help: "Transfers in flight at most.")
    var concurrency = 6

    @Option(name: .long, parsing: .singleValue, help: "Image options, comma-separated (see above).")
    var options: [String] = []

    @Option(name: .customLong("max-bytes"),
            help: "Largest response in bytes, after content decoding, or 'none' (default: the library's, 64 MiB).")
    var maxBytes: String?

    @Option(name: .long, help: "Seconds each transfer may take, from DNS to the last byte (default: the library's, 60).")
    var timeout: Double?

    @Flag(name: .customLong("public-only"), help: "Connect to public addresses only (checked on every address dialled).")
    var publicOnly = false

    @Option(name: .customLong("allow-network"), help: "With --public-only: a CIDR block allowed anyway (repeatable).")
    var allowNetworks: [String] = []

    @Flag(name: .customLong("no-file-urls"), help: "Refuse file URLs and paths.")
    var noFileURLs = false

    func validate() throws {
        _ = try Self.byteLimit(maxBytes)
        _ = try Self.networks(allowNetworks)
        if !allowNetworks.isEmpty, !publicOnly { throw ValidationError("--allow-network needs --public-only") }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        if let memoryCache, memoryCache < 0 { throw ValidationError("--memory-cache must be a byte count") }
        if let thumbnail, thumbnail < 1 { throw ValidationError("--thumbnail must be at least 1") }
        if let format, Self.outputFormat(format) == nil {
            throw ValidationError("--format must be png, jpeg, webp or gif, not '\(format)'")
        }
        if format != nil, out == nil { throw ValidationError("--format needs --out") }
        _ = try FetchOptionName.parse(options)
        if let memcached { _ = try Self.memcachedTier(memcached) }
    }

    /// The tier for `--memcached HOST:PORT[,HOST:PORT…]`.
    static func memcachedTier(_ list: String) throws -> MemcachedTier {
        do {
            return try MemcachedTier(servers: list.split(separator: ",").map(String.init))
        } catch {
            throw ValidationError("--memcached: \(error)")
        }
    }

    /// `--max-bytes`: nil keeps the library default; `.some(nil)` is "none" (no limit).
    static func byteLimit(_ text: String?) throws -> Int64?? {
        guard let text else { return nil }
        if text.lowercased() == "none" { return .some(nil) }
        guard let value = Int64(text), value >= 0 else {
            throw ValidationError("--max-bytes must be a byte count or 'none', not '\(text)'")
        }
        return .some(value)
    }

    /// `--allow-network` blocks.
    static func networks(_ texts: [String]) throws -> [IPNetwork] {
        try texts.map { text in
            guard let network = IPNetwork(text) else { throw ValidationError("--allow-network: not a CIDR block: '\(text)'") }
            return network
        }
    }

    /// Applies the transfer flags; without flags the library defaults stay.
    func configureTransfers(of manager: ImageManager) throws {
        if let limit = try Self.byteLimit(maxBytes) { manager.maximumResponseSize = limit }
        if let timeout { manager.timeout = timeout }
        if publicOnly { manager.sourcePolicy = .publicOnly(allowing: try Self.networks(allowNetworks)) }
        if noFileURLs { manager.allowsFileURLs = false }
    }

    static func outputFormat(_ name: String) -> ImageFormat? {
        switch name.lowercased() {
        case "png": return .png
        case "jpeg", "jpg": return .jpeg
        case "webp": return .webp
        case "gif": return .gif
        default: return nil
        }
    }

    func run() throws {
        PipelineLog.configure()
        let cachePath = cache ?? ImageCache.defaultPath()
        let sharedTier = try memcached.map(Self.memcachedTier)
        let imageCache = try ImageCache(path: cachePath, sharedTier: sharedTier)
        if let memoryCache { imageCache.memoryCache.costLimit = memoryCache }
        let manager = ImageManager(cache: imageCache, queue: FetchQueue(maxConcurrentTransfers: concurrency))
        try configureTransfers(of: manager)
        let writer = try out.map { path in
            let folder = URL(fileURLWithPath: path, isDirectory: true)
            do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
                throw CLIError.output(path: folder.path, reason: "\(error)")
            }
            return FetchOutputWriter(folder: folder, format: format.flatMap(Self.outputFormat), isThumbnail: thumbnail != nil)
        }
        var invalid: [(String, String)] = []
        var requests: [URL] = []
        for argument in urls {
            if let url = Self.url(from: argument) { requests.append(url) } else { invalid.append((argument, "not a URL")) }
        }
        let loader = BatchLoader(manager: manager, options: try FetchOptionName.parse(options),
                                 thumbnailPixelSize: thumbnail, concurrency: concurrency)
        let bar = ProgressBar(title: "fetch", total: requests.count)
        let report = FetchReport(writer: writer, failures: invalid, bar: bar)
        let start = Date()
        // Each outcome is written as it completes and dropped; only its line waits for its turn to print.
        loader.stream(requests) { index, outcome in
            bar.advance(bytes: outcome.bytes)
            report.complete(index, outcome)
        }
        manager.cache?.waitForPendingWrites() // disk writes run in the background; keep them before exiting
        if manager.cache?.waitForPendingSharedWrites() == false {
            Terminal.printError("warning: some shared-tier (memcached) writes were still pending at exit")
        }
        let seconds = Date().timeIntervalSince(start)
        bar.finish()
        let (bytes, failures) = report.summary
        for (url, reason) in failures { Terminal.printError("FAILED  \(url): \(reason)") }
        let okCount = urls.count - failures.count
        print("\(okCount) ok, \(failures.count) failed, \(Terminal.bytes(bytes)) in \(Terminal.duration(seconds)) · cache: \(cachePath)")
        if !failures.isEmpty { throw ExitCode(1) }
    }

    /// `argument` as a URL: http(s)/file URLs as given, an existing path as a file URL.
    static func url(from argument: String) -> URL? {
        if let url = URL(string: argument), let scheme = url.scheme, !scheme.isEmpty, url.host != nil || scheme == "file" {
            return url
        }
        if FileManager.default.fileExists(atPath: argument) { return URL(fileURLWithPath: argument) }
        return nil
    }
}
