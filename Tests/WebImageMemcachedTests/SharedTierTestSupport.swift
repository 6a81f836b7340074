import Foundation
import TestSupport
@testable import WebImage
import XCTest

/// A shared-tier envelope as `ImageCache` writes it.
func testEnvelope(key: String, body: Data) throws -> Data {
    try SharedTierEnvelope.encode(body, key: key, metadata: ImageCacheMetadata())
}

/// The final outcome of one request.
struct LoadOutcome: Sendable {
    var image: Image?
    var source: ImageSource
    var error: WebImageError?
    var seconds: Double
}

/// Requests `url` on `manager` and waits for its final completion.
func load(_ url: URL, with manager: ImageManager, timeout: Double = 20, file: StaticString = #filePath,
          line: UInt = #line) -> LoadOutcome {
    let done = DispatchSemaphore(value: 0)
    let box = Mutex<LoadOutcome?>(nil)
    let start = Date()
    manager.requestImage(url: url) { image, _, source, stage, error in
        guard stage != .progress else { return }
        box.withLock { $0 = LoadOutcome(image: image, source: source, error: error, seconds: Date().timeIntervalSince(start)) }
        done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "request timed out", file: file, line: line)
    return box.withLock { $0 } ?? LoadOutcome(image: nil, source: .none, error: nil, seconds: timeout)
}

/// Three real memcached servers, a loopback origin and a temporary folder, for the tests of the tier under
/// the pipeline and the CLI. Everything is stopped and removed in `tearDown`.
class MemcachedPoolTestCase: XCTestCase {
    var servers: [MemcachedProcess] = []
    var origin: HTTPTestServer!
    var folder: URL!

    override func setUpWithError() throws {
        servers = try startMemcached(3)
        origin = try HTTPTestServer.start()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-memcached-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for server in servers { server.kill() }
        servers = []
        origin?.shutdown()
        if let folder { try? FileManager.default.removeItem(at: folder) } // best effort: a temporary folder
    }

    /// A manager with its own disk folder (`name`) over `tier`.
    func manager(_ name: String, tier: (any RemoteCacheTier)?) throws -> ImageManager {
        let cache = try ImageCache(path: folder.appendingPathComponent(name).path, sharedTier: tier)
        return ImageManager(cache: cache, queue: FetchQueue(maxConcurrentTransfers: 6))
    }
}
