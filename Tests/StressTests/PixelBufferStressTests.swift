import Foundation
import WebImage
import Synchronization
import XCTest

/// Run under ThreadSanitizer by `make test`.
final class PixelBufferStressTests: XCTestCase {
    /// Many threads copy one shared buffer and mutate their copies: copy-on-write must give each its own
    /// pixels, with no data race on the shared storage.
    func testConcurrentCopyOnWrite() throws {
        let shared = try PixelBuffer(width: 64, height: 64)
        let results = Mutex<[Int: RGBA]>([:])
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            var mine = shared
            mine.setPixel(x: i, y: i, to: RGBA(r: UInt8(i), g: 1, b: 2, a: 3))
            results.withLock { $0[i] = mine.pixel(x: i, y: i) }
            XCTAssertEqual(shared.pixel(x: i, y: i), RGBA(r: 0, g: 0, b: 0, a: 0))
        }
        let final = results.withLock { $0 }
        XCTAssertEqual(final.count, 64)
        for (i, pixel) in final { XCTAssertEqual(pixel.r, UInt8(i)) }
    }
}
