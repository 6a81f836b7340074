import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImage
import WebImageServerCore
import WebImageServerHummingbird
import WebImageSync
import ServiceLifecycle
import XCTest

/// One image server on loopback (the Hummingbird adapter over an `ImageService`) and one origin (the
/// TestSupport NIO server), with a libcurl client: every test goes through real HTTP.
final class ServerHarness: @unchecked Sendable {
    // @unchecked: `task` and `group` are written once in `start` before any other thread sees the harness.
    let origin: HTTPTestServer
    let service: ImageService
    let port: Int
    let cacheDirectory: URL
    private var task: Task<Void, any Error>?
    private var group: ServiceGroup?
    static let client = FetchQueue(maxConcurrentTransfers: 128)

    /// The loopback networks tests allow (the default policy refuses them).
    static let loopback = [IPNetwork("127.0.0.0/8")!, IPNetwork("::1/128")!]

    /// A harness whose service is configured by `configure` (default: unsigned allowed, loopback allowed), its
    /// server closing connections idle for `idleTimeout` seconds (default the server's), with the server's other
    /// bounds (defaults the server's, but a 5 s shutdown grace so that a stuck test ends sooner).
    init(idleTimeout: Double? = ImageServer.defaultIdleTimeout,
         requestTimeout: Double? = ImageServer.defaultRequestTimeout,
         maxRequestBodySize: Int = ImageServer.defaultMaxRequestBodySize,
         maxConnections: Int = ImageServer.defaultMaxConnections,
         shutdownGrace: Double = 5,
         configure: (inout ImageServiceConfiguration) -> Void = { _ in }) async throws {
        origin = try HTTPTestServer.start()
        cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("webimage-server-tests-\(UUID().uuidString)")
        var configuration = ImageServiceConfiguration(cacheDirectory: cacheDirectory.path)
        configuration.allowsUnsigned = true
        configuration.allowedNetworks = Self.loopback
        // No render deadline unless a test sets one: a debug build on a busy machine takes more than the default 10 s
        // for the largest renders (a 4096² blur), and a render stopped there keeps its thread until its next check.
        configuration.renderTimeout = 0
        configure(&configuration)
        service = try ImageService(configuration: configuration)
        let server = ImageServer(service: service, host: "127.0.0.1", port: 0, idleTimeout: idleTimeout,
                                 requestTimeout: requestTimeout, maxRequestBodySize: maxRequestBodySize,
                                 maxConnections: maxConnections, shutdownGrace: shutdownGrace)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = server.makeServiceGroup { port in continuation.yield(port) }
        self.group = group
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        self.port = port
    }

    func stop() async {
        await group?.triggerGracefulShutdown()
        do { try await task?.value } catch { XCTFail("server ended with \(error)") }
        origin.shutdown()
        try? FileManager.default.removeItem(at: cacheDirectory)
    }

    /// `/image?` + the query made of `pairs` (escaped, unsigned unless `sig` is among them).
    func imageURL(_ pairs: [(String, String)]) -> URL {
        let query = pairs.map { "\(QueryString.escape($0.0))=\(QueryString.escape($0.1))" }.joined(separator: "&")
        return URL(string: "http://127.0.0.1:\(port)/image?\(query)")!
    }

    /// The origin URL of `path` as a string.
    func source(_ path: String) -> String { origin.url(path).absoluteString }

    /// GET `url` with `headers`, giving up after `timeout` seconds (default 30).
    func get(_ url: URL, headers: [String: String] = [:], timeout: Double = 30) async -> Reply {
        await Self.get(url, headers: headers, timeout: timeout)
    }

    /// GET /image with `pairs`, giving up after `timeout` seconds (default 30; a debug build's 4096² render
    /// may need more).
    func image(_ pairs: [(String, String)], headers: [String: String] = [:], timeout: Double = 30) async -> Reply {
        await get(imageURL(pairs), headers: headers, timeout: timeout)
    }

    /// The port a `webimage-server` process listens on, read from the line it prints on stdout (`out`, the
    /// process's standard output) when it is ready: "webimage-server listening on …:<port>" (logs go to stderr).
    /// Throws when stdout ends first.
    static func listeningPort(_ out: Pipe) async throws -> Int {
        try await Task.detached { () throws -> Int in
            var line = Data()
            while true {
                let byte = out.fileHandleForReading.readData(ofLength: 1)
                guard !byte.isEmpty else { throw CocoaError(.fileReadUnknown) }
                if byte != Data("\n".utf8) { line.append(byte); continue }
                let text = String(decoding: line, as: UTF8.self)
                line = Data()
                if text.hasPrefix("webimage-server listening on"), let port = text.split(separator: ":").last.flatMap({ Int($0) }) {
                    return port
                }
            }
        }.value
    }

    static func get(_ url: URL, headers: [String: String] = [:], timeout: Double = 30) async -> Reply {
        do {
            var request = FetchRequest(url: url, headers: headers, timeout: timeout)
            request.inactivityTimeout = timeout // a render may send nothing for a while: the deadline is `timeout`
            let result = try await client.fetch(request)
            return Reply(status: result.response.statusCode ?? 0, response: result.response, body: result.body)
        } catch .httpStatus(let status, let response) {
            return Reply(status: status, response: response, body: Data())
        } catch .notModified(let response) {
            return Reply(status: 304, response: response, body: Data())
        } catch {
            return Reply(status: -1, response: nil, body: Data(), error: error)
        }
    }

    struct Reply: Sendable {
        var status: Int
        var response: FetchResponse?
        var body: Data
        var error: FetchError?

        func header(_ name: String) -> String? { response?.value(forHeader: name) }

        /// The body decoded (every frame).
        func decoded(file: StaticString = #filePath, line: UInt = #line) throws -> Image {
            XCTAssertEqual(status, 200, "status", file: file, line: line)
            return try ImageDecoder.decode(body, options: DecodeOptions(preloadAllFrames: true))
        }
    }
}

/// Test images made by our own encoder (deterministic, no files).
enum TestImages {
    /// An opaque gradient, `width` × `height`, as JPEG (quality 0.9) or another format.
    static func gradient(width: Int, height: Int, format: ImageFormat = .jpeg, alpha: Bool = false) throws -> [UInt8] {
        var buffer = try PixelBuffer(width: width, height: height, pixelFormat: .rgba8)
        for y in 0..<height {
            for x in 0..<width {
                let a: UInt8 = alpha ? UInt8(truncatingIfNeeded: 55 + (x * 200) / max(1, width)) : 255
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(truncatingIfNeeded: x * 255 / max(1, width)),
                                                     g: UInt8(truncatingIfNeeded: y * 255 / max(1, height)),
                                                     b: UInt8(truncatingIfNeeded: (x + y) % 256), a: a))
            }
        }
        var encoder = ImageEncoder(format: format)
        encoder.addFrame(buffer)
        return Array(try encoder.encode())
    }

    /// An animated GIF of `frames` frames, 60 × 40, each a different flat colour, 0.1 s each.
    static func animatedGIF(frames: Int) throws -> [UInt8] {
        var encoder = ImageEncoder(format: .gif, loopCount: 0)
        for index in 0..<frames {
            var buffer = try PixelBuffer(width: 60, height: 40, pixelFormat: .rgba8)
            let colour = RGBA(r: UInt8(index * 80 % 256), g: UInt8(255 - index * 60 % 256), b: 40)
            for y in 0..<40 { for x in 0..<60 { buffer.setPixel(x: x, y: y, to: colour) } }
            encoder.addFrame(buffer, duration: 0.1)
        }
        return Array(try encoder.encode())
    }

    /// `jpeg` with an EXIF APP1 segment carrying `orientation`, inserted after SOI.
    static func withEXIFOrientation(_ jpeg: [UInt8], orientation: UInt16) -> [UInt8] {
        // TIFF little-endian: header, one IFD of one entry (0x0112 SHORT 1 = orientation), no next IFD.
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00,
                             0x01, 0x00,
                             0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
                             UInt8(orientation & 0xFF), UInt8(orientation >> 8), 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return [jpeg[0], jpeg[1]] + segment + jpeg[2...]
    }
}
