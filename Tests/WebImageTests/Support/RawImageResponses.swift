import Foundation
import Synchronization
import WebImage
import XCTest

/// Byte-exact HTTP answers for `RawHTTPServer` origins in the HTTP-caching tests: a PNG (or any) body with the
/// header fields a case needs, and a bare 304.
enum RawImageResponse {
    /// `HTTP/1.1 <status>` with `Content-Type` and `Content-Length`, then `fields`, then `body`.
    static func with(status: String = "200 OK", contentType: String = "image/png", _ fields: [String], body: Data) -> [UInt8] {
        let head = (["HTTP/1.1 \(status)", "Content-Type: \(contentType)", "Content-Length: \(body.count)"] + fields)
            .joined(separator: "\r\n") + "\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }

    /// Whether a request head (as `RawHTTPServer.requestHeads` records it) is conditional: it carries
    /// `If-None-Match` or `If-Modified-Since`.
    static func isConditional(_ head: String) -> Bool {
        let lower = head.lowercased()
        return lower.contains("if-none-match:") || lower.contains("if-modified-since:")
    }

    /// `HTTP/1.1 304 Not Modified` with `fields` and no body.
    static func notModified(_ fields: [String]) -> [UInt8] {
        Array(((["HTTP/1.1 304 Not Modified"] + fields).joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }
}

extension ImageManager {
    /// A manager over a disk cache in `directory/name` (a second one with the same name: a restarted process on the
    /// same cache), over `tier` when given, with 4 transfers at once.
    static func onDisk(_ directory: URL, _ name: String, tier: (any RemoteCacheTier)? = nil) throws -> ImageManager {
        let cache = try ImageCache(path: directory.appendingPathComponent(name).path, sharedTier: tier)
        return ImageManager(cache: cache, queue: FetchQueue(maxConcurrentTransfers: 4))
    }

    /// Requests `url` with `options` (default `.useHTTPCache`), at `thumbnailPixelSize` when given, and waits up to
    /// `timeout` seconds for its final completion (progress stages skipped); a timeout is a test failure at the
    /// caller's line.
    func loadAndWait(_ url: URL, options: ImageOptions = [.useHTTPCache], thumbnailPixelSize: Int? = nil,
                     timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line)
        -> (image: Image?, source: ImageSource, error: WebImageError?) {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<(Image?, ImageSource, WebImageError?)>((nil, .none, nil))
        requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize) { image, _, source, stage, error in
            guard stage != .progress else { return }
            box.withLock { $0 = (image, source, error) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "request timed out", file: file, line: line)
        return box.withLock { $0 }
    }
}
