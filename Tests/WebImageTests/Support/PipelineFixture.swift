import Synchronization
import Fetcher
import Foundation
import ImageCodec
import KVCache
import TestSupport
import WebImage
import XCTest

/// A loopback server, a temporary cache folder and a manager over them, plus generated test images.
final class PipelineFixture: @unchecked Sendable { // set up once per test, then only read
    let server: HTTPTestServer
    let directory: URL
    let queue: FetchQueue
    private(set) var manager: ImageManager

    init(file: StaticString = #filePath, line: UInt = #line) throws {
        server = try HTTPTestServer.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-tests-\(UUID().uuidString)")
        queue = FetchQueue(maxConcurrentTransfers: 6)
        manager = ImageManager(cache: try ImageCache(path: directory.path), queue: queue)
    }

    /// A manager that shares nothing in memory with the first one but the same disk folder (same process:
    /// the same DiskCache instance, a new memory cache).
    func freshManager() throws -> ImageManager {
        ImageManager(cache: try ImageCache(path: directory.path), queue: queue)
    }

    func tearDown() {
        server.shutdown()
        do { try FileManager.default.removeItem(at: directory) } catch { /* already gone */ }
    }

    /// Serves `data` at `path` and returns its URL.
    @discardableResult
    func serve(_ path: String, _ data: Data, contentType: String = "image/png") -> URL {
        server.route(path, .bytes(data, contentType: contentType))
        return server.url(path)
    }

    /// The outcome of one request.
    struct Outcome: Sendable {
        var image: Image?
        var source: ImageSource
        var stage: ImageStage
        var error: WebImageError?
        var partials: Int
    }

    /// Requests `url` and waits for its final completion.
    func load(_ url: URL, options: ImageOptions = [], thumbnail: Int? = nil, manager: ImageManager? = nil,
              timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<Outcome?>(nil)
        let partials = Mutex(0)
        (manager ?? self.manager).requestImage(url: url, options: options, thumbnailPixelSize: thumbnail) { image, _, source, stage, error in
            if stage == .progress { partials.withLock { $0 += 1 }; return }
            let already = box.withLock { b -> Bool in
                defer { b = Outcome(image: image, source: source, stage: stage, error: error, partials: 0) }
                return b != nil
            }
            XCTAssertFalse(already, "completion called twice", file: file, line: line)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + timeout), .success, "request timed out", file: file, line: line)
        var outcome = box.withLock { $0 } ?? Outcome(image: nil, source: .none, stage: .cancelled, error: nil, partials: 0)
        outcome.partials = partials.withLock { $0 }
        return outcome
    }
}

/// Generated images (encoded with WebImage's own encoders).
enum TestImages {
    /// A w×h gradient with a diagonal stripe, opaque.
    static func pattern(width: Int, height: Int, seed: Int = 0) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let stripe = (x + y + seed) % 16 < 8
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8((x * 255) / max(width - 1, 1)), g: UInt8((y * 255) / max(height - 1, 1)),
                                                     b: stripe ? 200 : UInt8(seed % 256), a: 255))
            }
        }
        return buffer
    }

    static func png(width: Int = 64, height: Int = 48, seed: Int = 0) throws -> Data {
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try pattern(width: width, height: height, seed: seed))
        return try encoder.encode()
    }

    static func jpeg(width: Int = 64, height: Int = 48, progressive: Bool = false, seed: Int = 0) throws -> Data {
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9, isProgressive: progressive))
        encoder.addFrame(try pattern(width: width, height: height, seed: seed))
        return try encoder.encode()
    }

    static func apng(frames: Int = 3) throws -> Data {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        for i in 0..<frames { encoder.addFrame(try pattern(width: 16, height: 16, seed: i * 5), duration: 0.1) }
        return try encoder.encode()
    }
}
