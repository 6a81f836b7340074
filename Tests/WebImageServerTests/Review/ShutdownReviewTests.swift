import Foundation
import ImageCodec
import TestSupport
import WebImageServerCore
import WebImageSync
import XCTest

/// Review: SIGTERM "lets the requests in flight finish, then exits". A client that asks for an image and never
/// reads the answer (a stuck or malicious client, a half-dead connection) keeps its response unwritten for
/// ever; the graceful shutdown must not wait for it without bound, or a fleet's rolling restart hangs until
/// the supervisor's SIGKILL (and a process that is not killed never exits).
final class ShutdownReviewTests: XCTestCase {
    /// An opaque noise PNG (incompressible), `side` × `side`.
    static func noisePNG(side: Int) throws -> [UInt8] {
        var buffer = try PixelBuffer(width: side, height: side, pixelFormat: .rgba8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for y in 0..<side {
            for x in 0..<side {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let v = state >> 24
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(truncatingIfNeeded: v), g: UInt8(truncatingIfNeeded: v >> 8),
                                                     b: UInt8(truncatingIfNeeded: v >> 16), a: 255))
            }
        }
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(buffer)
        return Array(try encoder.encode())
    }

    func testAClientThatNeverReadsCannotHoldTheShutdownForever() async throws {
        let harness = try await ServerHarness()
        harness.origin.route("/noise.png", .bytes(try Self.noisePNG(side: 1800), contentType: "image/png"))
        let pairs = [("url", harness.source("/noise.png")), ("format", "png")]
        // Control (and warm-up: the stuck request below is answered from the result cache at once).
        let control = await harness.image(pairs)
        XCTAssertEqual(control.status, 200)
        XCTAssertGreaterThan(control.body.count, 9 << 20, "more than the socket buffers hold")

        // The stuck client: a 4 KB receive buffer, one request, never a read.
        let client = try RawClient(port: harness.port, receiveTimeout: nil, receiveBufferSize: 4096)
        let target = harness.imageURL(pairs).path + "?" + (harness.imageURL(pairs).query ?? "")
        XCTAssertTrue(client.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        try await Task.sleep(for: .seconds(1)) // the answer is written until the buffers are full

        let stopped = Mutex(false)
        let started = ContinuousClock.now
        let stopping = Task {
            await harness.stop()
            stopped.withLock { $0 = true }
        }
        while !stopped.withLock({ $0 }), ContinuousClock.now - started < .seconds(45) {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertTrue(stopped.withLock { $0 }, "the graceful shutdown still waits for a client that never reads, "
                      + "\(ContinuousClock.now - started) after it began")
        client.close() // lets a hung shutdown end, so the test itself ends
        await stopping.value
    }
}
