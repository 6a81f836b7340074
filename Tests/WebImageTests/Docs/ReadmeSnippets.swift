// The Swift snippets of README.md (and the guides' blocks shared with it), compiled here so they never rot. `ReadmeSnippetsTests` checks that every
// ```swift block of the README appears in this file verbatim (leading whitespace aside) — edit both together.
import Foundation
import WebImage
import WebImageMemcached
import WebImageAVIF
import WebImageHEIF
import WebImageJXL

enum ReadmeSnippets {
    static func requestWithCompletion(url: URL) {
        // snippet: request
        let operation = ImageManager.shared.requestImage(url: url, options: [.progressive]) { image, url, source, stage, error in
            guard stage == .finished, let image else { return }
            print("\(url): \(image.width)×\(image.height) from \(source)")
        }
        // operation.cancel() at any time: the completion then runs once with stage .cancelled.
        // end
        _ = operation
    }

    static func requestAsync(url: URL) async throws {
        // snippet: async
        let image = try await ImageManager.shared.image(for: url)
        // end
        _ = image
    }

    static func codecAlone(data: Data) throws {
        // snippet: codec
        let image = try ImageDecoder.decode(data)                 // JPEG, PNG, APNG, GIF, WebP
        let png = try image.encoded(as: .png)
        // end
        _ = png
    }

    static func thumbnails(url: URL, data: Data) async throws {
        // snippet: thumbnail
        // A 256-px thumbnail, decoded downsampled and cached in memory under its own key.
        let thumbnail = try await ImageManager.shared.image(for: url, thumbnailPixelSize: 256)
        // The same with the codec alone, from bytes:
        let small = try ImageDecoder.decode(data, options: DecodeOptions(maxPixelSize: 256))
        // end
        _ = (thumbnail, small)
    }

    static func customManager() throws {
        // snippet: manager
        let cache = try ImageCache(path: "/var/cache/myservice/images")
        cache.diskCache?.costLimit = 2 << 30                      // 2 GB on disk, LRU-trimmed every 60 s
        cache.memoryCache.costLimit = 256 << 20                   // 256 MB of decoded pixels
        let manager = ImageManager(cache: cache, queue: FetchQueue(maxConcurrentTransfers: 16))
        manager.timeout = 10
        manager.cacheKeyFilter = { url in url.absoluteString.components(separatedBy: "?")[0] }  // signed URLs
        // end
        _ = manager
    }

    static func events(url: URL) async throws {
        // snippet: events
        for try await event in ImageManager.shared.imageEvents(for: url, options: [.progressiveBlur]) {
            switch event {
            case .progress(let received, let expected): print("\(received) of \(expected ?? -1) bytes")
            case .partial(let image): print("partial \(image.width)×\(image.height)")
            case .finished(let image, let source): print("done: \(image.frameCount) frame(s) from \(source)")
            }
        }
        // end
    }

    // snippet: target
    final class Tile: ImageTarget {
        let imageSetter = ImageSetter()
        let displayQueue = DispatchQueue(label: "tile")
        func display(_ image: Image?) { /* draw image?.firstFrame.buffer */ }
    }
    // end

    static func useTile(urls: [URL]) {
        // snippet: setter
        let tile = Tile()
        for url in urls { tile.setImage(with: url) }      // the last URL wins; earlier results are never shown
        // end
    }

    static func prefetch(nextPageURLs: [URL], galleryURLs: [URL]) async {
        // snippet: prefetcher
        let prefetcher = ImagePrefetcher(destination: .diskCache)
        prefetcher.startPrefetching(with: nextPageURLs)
        prefetcher.stopPrefetching(with: nextPageURLs)            // the user scrolled elsewhere
        let summary = await ImagePrefetcher().prefetch(galleryURLs) // or wait: loaded / alreadyCached / failed
        // end
        _ = summary
    }

    static func play(image: Image) {
        // snippet: player
        let player = AnimatedImagePlayer(image: image)      // plays at 60 Hz on its own timer
        player.onFrameChange = { frame in
            print("show frame \(frame.index): \(frame.buffer.width)×\(frame.buffer.height)")
        }
        // Or drive it from your renderer's clock: player.preferredFramesPerSecond = 0; player.step(by: dt)
        // end
    }

    static func kvCache() throws {
        // snippet: kvcache
        let cache = try Cache<Data>(path: "/tmp/my-kv-cache")   // memory LRU + SQLite/file disk store
        try cache.setObject(Data("value".utf8), forKey: "key")
        let value = try cache.object(forKey: "key")
        // end
        _ = value
    }

    static func fetcher(url: URL) async throws {
        // snippet: fetcher
        let result = try await FetchQueue.shared.fetch(FetchRequest(url: url))
        print(result.response.statusCode ?? 0, result.body.count)
        // end
    }

    static func untrustedSources() throws {
        // snippet: untrusted
        let manager = ImageManager(cache: try ImageCache(), queue: FetchQueue(maxConcurrentTransfers: 6))
        manager.sourcePolicy = .publicOnly(allowing: [IPNetwork("10.20.0.0/16")].compactMap { $0 })
        manager.allowsFileURLs = false
        manager.maximumResponseSize = 20 << 20      // 20 MiB after content decoding; nil = no limit
        manager.timeout = 5                         // the whole transfer, from DNS to the last byte (60 s by default)
        manager.inactivityTimeout = 2               // less than 1 byte/s for 2 s ends it (15 s by default)
        // end
    }

    static func fleet() throws {
        // snippet: fleet
        var options = MemcachedTier.Options()              // defaults: 50 ms timeouts, 2 s breaker window
        options.itemSizeLimit = 1 << 20                    // the servers' -I (values above it are skipped)
        let tier = try MemcachedTier(servers: ["10.0.0.5:11211", "10.0.0.6:11211", "10.0.0.7:11211"], options: options)
        let cache = try ImageCache(path: "/var/cache/thumbs", sharedTier: tier)
        let manager = ImageManager(cache: cache)            // memory → disk → memcached pool → origin
        // end
        _ = manager
        print(tier.statistics.hits, tier.serverStates.filter(\.isBreakerOpen).map(\.server))
    }

    static func codecModules(data: Data) throws {
        // snippet: codec-modules
        AVIFCodec.register()                      // import WebImageAVIF: libavif
        JXLCodec.register()                       // import WebImageJXL: libjxl
        HEIFCodec.register()                      // import WebImageHEIF: libheif (see the licence note)
        let image = try ImageDecoder.decode(data) // now also AVIF, JPEG XL and HEIC, here and in the manager
        // end
        _ = image
    }

    static func registerOwnCodec(myDecoder: any ImageDecoding) {
        // snippet: registry
        let token = ImageCodecRegistry.shared.register(decoder: myDecoder)  // tried before every earlier codec
        ImageCodecRegistry.shared.unregister(token)
        // end
    }
}
