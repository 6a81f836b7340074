import Foundation
import TestSupport
@testable import WebImage
import XCTest

/// A 40×30 PNG whose pattern depends on `seed`.
func testPNG(seed: UInt8) throws -> Data {
    var buffer = try PixelBuffer(width: 40, height: 30, pixelFormat: .rgba8)
    for y in 0..<30 {
        for x in 0..<40 { buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8(x * 6), g: UInt8(y * 8), b: seed &* 90)) }
    }
    var encoder = ImageEncoder(format: .png)
    encoder.addFrame(buffer)
    return try encoder.encode()
}

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
