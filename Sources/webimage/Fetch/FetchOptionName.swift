import Foundation
import WebImage

/// The `--options` names of `webimage fetch`, mapped to `ImageOptions`.
enum FetchOptionName {
    static let all: [(name: String, option: ImageOptions, help: String)] = [
        ("progressive", .progressive, "deliver partial images while downloading"),
        ("use-http-cache", .useHTTPCache, "revalidate with the server (ETag / Last-Modified)"),
        ("allow-invalid-ssl", .allowInvalidSSLCertificates, "accept invalid TLS certificates"),
        ("handle-cookies", .handleCookies, "send and store cookies"),
        ("refresh", .refreshImageCache, "skip the caches and download again"),
        ("ignore-disk-cache", .ignoreDiskCache, "neither read nor write the disk cache"),
        ("first-frame", .ignoreAnimatedImage, "decode the first frame of animations only"),
        ("ignore-failed-url", .ignoreFailedURL, "do not retry URLs that failed before"),
        ("memory-only", .cacheMemoryOnly, "cache in memory only"),
        ("high-priority", .highPriority, "queue transfers first"),
        ("low-priority", .lowPriority, "queue transfers last"),
    ]

    /// The options named in `names` (comma-separated lists allowed).
    ///
    /// - Throws: `CLIError.usage` naming an unknown option and listing the known ones.
    static func parse(_ names: [String]) throws -> ImageOptions {
        var options: ImageOptions = []
        for name in names.flatMap({ $0.split(separator: ",") }).map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let entry = all.first(where: { $0.name == name }) else {
                throw CLIError.usage("unknown option '\(name)'; known: \(all.map(\.name).joined(separator: ", "))")
            }
            options.insert(entry.option)
        }
        return options
    }
}
