import Foundation
import TestSupport
import WebImage
import Synchronization
import XCTest

/// Run under ThreadSanitizer by `make test`.
final class CodecRegistryStressTests: XCTestCase {
    /// Threads register and unregister codecs while others decode through the registry: no data race, and every
    /// decode of a built-in format succeeds whatever is registered around it.
    func testConcurrentRegistrationAndDecoding() throws {
        var pixels = try PixelBuffer(width: 8, height: 8)
        pixels.setPixel(x: 1, y: 1, to: RGBA(r: 255, g: 0, b: 0, a: 255))
        let png = try Image(buffer: pixels).encoded(as: .png)
        let registry = ImageCodecRegistry.shared
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<40 {
                if worker % 2 == 0 {
                    let token = registry.register(decoder: TinyCodec())
                    let encoder = registry.register(encoder: TinyCodec())
                    _ = registry.additionalMIMETypes
                    registry.unregister(token)
                    registry.unregister(encoder)
                } else {
                    do {
                        let image = try ImageDecoder.decode(png)
                        if image.width != 8 { failures.withLock { $0 += 1 } }
                        _ = ImageFormat.avif.isDecodable
                        _ = round
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
        XCTAssertFalse(registry.additionalMIMETypes.contains(TinyCodec.mimeType), "every registration was removed")
    }
}
