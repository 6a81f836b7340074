// The Swift snippets of the guides in docs/ (beside ReadmeSnippets.swift, which holds the README's and the
// blocks the guides share with it), compiled here so they never rot. `ReadmeSnippetsTests` checks that every
// ```swift block of README.md and docs/*.md appears in one of these files verbatim (leading whitespace
// aside) — edit both together.
import Foundation
import WebImage

enum DocsSnippets {
    static func resultAPI(url: URL) {
        // snippet: result (docs/getting-started.md)
        ImageManager.shared.loadImage(url: url, thumbnailPixelSize: 200) { result in
            switch result {
            case .success(let response): print("\(response.image.width)×\(response.image.height) from \(response.source)")
            case .failure(let error): print("no image: \(error)")   // a 404, a decode failure, a cancel…
            }
        }
        // end
    }

    static func colour(data: Data) throws {
        // snippet: colour (docs/colour.md)
        var options = DecodeOptions()
        options.colorManagement = .preserve          // pixels as stored, the profile kept on the image
        let image = try ImageDecoder.decode(data, options: options)
        print(image.colorSpace as Any)               // what the source said: ICC bytes and/or CICP, or nil
        // end
    }

    static func placeholders(url: URL) async throws {
        // snippet: placeholders (docs/getting-started.md)
        let info = try await ImageManager.shared.imageInfo(url: url)      // the header only: no pixels decoded
        print(info.format, info.width, info.height, info.frameCount)
        let image = try await ImageManager.shared.image(for: url, thumbnailPixelSize: 100)
        let blurHash = try image.blurHash()                               // "LEHV6nWB2yk8pyo0adR*.7kCMdnj", 4×3 components
        let thumbHash = try image.thumbHash()                             // ~25 bytes; base64 it for a page
        let preview = try BlurHash.decode(blurHash, width: 32, height: 32) // a PixelBuffer to show while loading
        print(blurHash, thumbHash.count, preview.width)
        // end
    }

    static func defaultManager() throws {
        // snippet: shared (docs/getting-started.md)
        ImageManager.shared = ImageManager(cache: try ImageCache(path: "/var/cache/myapp/images"))
        // end
    }

    static func timeoutsAndTLS() throws {
        // snippet: timeouts (docs/getting-started.md)
        let manager = ImageManager(cache: try ImageCache())
        manager.timeout = 60                        // the whole transfer (the default)
        manager.inactivityTimeout = 15              // less than 1 byte/s for 15 s ends it (the default)
        // end
        // snippet: tls (docs/getting-started.md)
        var tls = TLSOptions()
        tls.caBundlePath = "/etc/myservice/ca.pem"                 // trust our own CA (and only it)
        tls.pinnedPublicKeyHashes = ["d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM="]
        manager.tls = tls
        // end
    }

    static func httpCache(url: URL) async throws {
        // snippet: http-cache (docs/caching-and-http.md)
        let image = try await ImageManager.shared.image(for: url, options: [.useHTTPCache])
        // end
        _ = image
    }
}
